import { deleteExpiredIdempotencyRecords, findIdempotencyRecord } from '../store/idempotency.ts';
import type { IdempotencyRecordRow } from '../store/schema.ts';
import { ApiError } from './errors.ts';
import type { Dependencies, RequestContext } from './context.ts';

export const IDEMPOTENCY_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyInput {
  key: string;
  /** SHA-256 of the method, path and body, to tell a retry from a different request. */
  requestHash: string;
}

/** What the unit of work stores with the key, inside its own transaction. */
export interface IdempotencyClaim extends IdempotencyInput {
  expiresAt: number;
}

export interface ServiceResponse {
  statusCode: number;
  body: unknown;
  /** True when this is the stored answer to an earlier request with the same Idempotency-Key. */
  replayed?: boolean;
}

export const IDEMPOTENCY_CONFLICT = Symbol('idempotency conflict');

function replay(record: IdempotencyRecordRow, input: IdempotencyInput): ServiceResponse {
  if (record.request_hash !== input.requestHash) {
    throw new ApiError('idempotency_key_reused', 'Idempotency-Key was already used with a different request; use a new key for a new request');
  }
  return { statusCode: record.status_code, body: JSON.parse(record.response_body) as unknown, replayed: true };
}

/**
 * Runs a POST under an optional Idempotency-Key (docs/api.md): the same key and body within 24
 * hours returns the first response and does nothing new; another body is 422; while the first is
 * still in flight, 409. Only successful responses are stored: a request that was refused changed
 * nothing, so retrying it simply tries again.
 */
export async function runIdempotently(
  ctx: RequestContext,
  input: IdempotencyInput | undefined,
  work: (claim: IdempotencyClaim | null) => Promise<ServiceResponse | typeof IDEMPOTENCY_CONFLICT>,
): Promise<ServiceResponse> {
  if (!input) {
    const result = await work(null);
    if (result === IDEMPOTENCY_CONFLICT) throw new Error('idempotency conflict without a key');
    return result;
  }
  const { deps, caller } = ctx;
  const ref = { workspaceId: caller.workspaceId, key: input.key };
  const flightKey = `${caller.workspaceId}\u0000${input.key}`;
  if (deps.idempotencyKeysInFlight.has(flightKey)) throw new ApiError('idempotency_key_in_flight', 'a request with this Idempotency-Key is still in progress; retry it later');
  deps.idempotencyKeysInFlight.add(flightKey);
  try {
    const existing = await findIdempotencyRecord(deps.store.db, ref, deps.clock());
    if (existing) return replay(existing, input);
    const result = await work({ ...input, expiresAt: deps.clock() + IDEMPOTENCY_LIFETIME_MS });
    if (result !== IDEMPOTENCY_CONFLICT) return result;
    const winner = await findIdempotencyRecord(deps.store.db, ref, deps.clock());
    if (!winner) throw new ApiError('idempotency_key_in_flight', 'a request with this Idempotency-Key is still in progress; retry it later');
    return replay(winner, input);
  } finally {
    deps.idempotencyKeysInFlight.delete(flightKey);
  }
}

/** Maintenance: removes idempotency records past their 24-hour life. */
export async function purgeExpiredIdempotencyRecords(deps: Pick<Dependencies, 'store' | 'clock'>): Promise<number> {
  return deleteExpiredIdempotencyRecords(deps.store.db, deps.clock());
}
