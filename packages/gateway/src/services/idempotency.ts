import { deleteExpiredIdempotencyRecords, findIdempotencyResult, type IdempotencyClaim, type StoredIdempotencyResult } from '../store/idempotency.ts';
import type { WorkspaceCaller, Context, TaskCaller, VerbCall } from './context.ts';
import { ApiError } from './errors.ts';

export type { IdempotencyClaim } from '../store/idempotency.ts';

const IDEMPOTENCY_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyInput {
  key: string;
  /** SHA-256 of the method, path and body, to tell a retry from a different request. */
  requestHash: string;
}

/** A verb's input that may carry an Idempotency-Key. */
export interface Idempotent {
  idempotency?: IdempotencyInput;
}

/** What an idempotent verb did: now, or (replayed) for an earlier request with the same key. */
export interface IdempotentOutcome<Result> {
  result: Result;
  replayed: boolean;
}

export const IDEMPOTENCY_CONFLICT = Symbol('idempotency conflict');

function replay<Result>(record: StoredIdempotencyResult, input: IdempotencyInput): IdempotentOutcome<Result> {
  if (record.requestHash !== input.requestHash) {
    throw new ApiError('idempotency_key_reused', 'Idempotency-Key was already used with a different request; use a new key for a new request');
  }
  // Written by this same verb with this key: the stored result is of its type.
  return { result: record.result as Result, replayed: true };
}

/**
 * Runs a POST under an optional Idempotency-Key (docs/api.md): the same key and body within 24
 * hours returns the first result and does nothing new; another body is 422; while the first is
 * still in flight, 409. Only what was done is stored: a request that was refused changed nothing,
 * so retrying it simply tries again. `work` stores its result with the claim in its own transaction.
 */
export async function runIdempotently<Result>(
  ctx: Context<WorkspaceCaller>,
  input: IdempotencyInput | undefined,
  work: (claim: IdempotencyClaim | null) => Promise<Result | typeof IDEMPOTENCY_CONFLICT>,
): Promise<IdempotentOutcome<Result>> {
  if (!input) {
    const result = await work(null);
    if (result === IDEMPOTENCY_CONFLICT) throw new Error('idempotency conflict without a key');
    return { result, replayed: false };
  }
  const { parts, caller, store, clock } = ctx;
  const ref = { workspaceId: caller.workspaceId, key: input.key };
  const flightKey = `${caller.workspaceId}\u0000${input.key}`;
  if (parts.idempotencyKeysInFlight.has(flightKey)) throw new ApiError('idempotency_key_in_flight', 'a request with this Idempotency-Key is still in progress; retry it later');
  parts.idempotencyKeysInFlight.add(flightKey);
  try {
    const existing = await findIdempotencyResult(store.db, ref, clock());
    if (existing) return replay<Result>(existing, input);
    const result = await work({ ...input, expiresAt: clock() + IDEMPOTENCY_LIFETIME_MS });
    if (result !== IDEMPOTENCY_CONFLICT) return { result, replayed: false };
    const winner = await findIdempotencyResult(store.db, ref, clock());
    if (!winner) throw new ApiError('idempotency_key_in_flight', 'a request with this Idempotency-Key is still in progress; retry it later');
    return replay<Result>(winner, input);
  } finally {
    parts.idempotencyKeysInFlight.delete(flightKey);
  }
}

/** Maintenance: removes idempotency records past their 24-hour life. */
export async function purgeExpiredIdempotencyRecords({ ctx }: VerbCall<TaskCaller, Record<string, never>>): Promise<number> {
  return deleteExpiredIdempotencyRecords(ctx.store.db, ctx.clock());
}
