import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Transaction } from './database.ts';
import type { Database, IdempotencyRecordRow } from './schema.ts';

export interface IdempotencyKeyRef {
  workspaceId: string;
  key: string;
}

/** What a unit of work stores with its key, inside its own transaction. */
export interface IdempotencyClaim {
  key: string;
  requestHash: string;
  expiresAt: number;
}

/** A live record: the fingerprint of the request that used the key, and what it did. */
export interface StoredIdempotencyResult {
  requestHash: string;
  result: unknown;
}

export function idempotencyRecordOf(workspaceId: string, claim: IdempotencyClaim, result: unknown, now: number): IdempotencyRecordRow {
  return {
    workspace_id: workspaceId,
    idempotency_key: claim.key,
    request_hash: claim.requestHash,
    result: JSON.stringify(result),
    status_code: null,
    response_body: null,
    created_at: now,
    expires_at: claim.expiresAt,
  };
}

export async function findIdempotencyResult(db: Kysely<Database>, ref: IdempotencyKeyRef, now: number): Promise<StoredIdempotencyResult | undefined> {
  const row = await db
    .selectFrom('idempotency_records')
    .selectAll()
    .where('workspace_id', '=', ref.workspaceId)
    .where('idempotency_key', '=', ref.key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  const result = row.result !== null ? (JSON.parse(row.result) as unknown) : resultOfStoredResponse(JSON.parse(row.response_body ?? 'null') as unknown);
  return { requestHash: row.request_hash, result };
}

type WireRecipient = { phone?: string; msg_id?: string; tracking_id?: string; status: 'queued' | 'error'; error?: string };

/**
 * A record written before results were stored holds the response it answered with: read it back as
 * the result that response was built from. No such record outlives the upgrade by more than 24 hours.
 */
function resultOfStoredResponse(body: unknown): unknown {
  const response = body as Record<string, unknown>;
  if (response.cancelled === true) return { messageId: response.msg_id };
  const scheduledAt = typeof response.scheduled_at === 'string' ? Date.parse(response.scheduled_at) : null;
  if (Array.isArray(response.results)) {
    const recipients = (response.results as WireRecipient[]).map((item) => {
      const echo = { ...(item.phone !== undefined && { phone: item.phone }) };
      return item.status === 'queued'
        ? { ...echo, status: 'queued', messageId: item.msg_id, messageTrackingId: item.tracking_id }
        : { ...echo, ...(item.tracking_id !== undefined && { trackingId: item.tracking_id }), status: 'refused', refusal: item.error };
    });
    return { acceptedCount: response.accepted, scheduledAt, recipients };
  }
  return { acceptedCount: 1, scheduledAt, recipients: [{ status: 'queued', messageId: response.msg_id, messageTrackingId: response.tracking_id }] };
}

/**
 * Inside a write transaction: drops expired records for these keys and returns the keys that
 * still have a live record (their requests were already done by someone else).
 */
export async function claimIdempotencyKeys(trx: Transaction, refs: IdempotencyKeyRef[], now: number): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const matchesRefs = (eb: ExpressionBuilder<Database, 'idempotency_records'>) =>
    eb.or(refs.map((ref) => eb.and([eb('workspace_id', '=', ref.workspaceId), eb('idempotency_key', '=', ref.key)])));
  await trx.deleteFrom('idempotency_records').where('expires_at', '<=', now).where(matchesRefs).execute();
  const live = await trx.selectFrom('idempotency_records').select(['workspace_id', 'idempotency_key']).where(matchesRefs).execute();
  return new Set(live.map((row) => idempotencyKeyId({ workspaceId: row.workspace_id, key: row.idempotency_key })));
}

export function idempotencyKeyId(ref: IdempotencyKeyRef): string {
  return `${ref.workspaceId}\u0000${ref.key}`;
}

/** Removes records past their 24-hour life. */
export async function deleteExpiredIdempotencyRecords(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
