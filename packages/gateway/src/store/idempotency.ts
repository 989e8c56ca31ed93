import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Transaction } from './database.ts';
import type { Database, IdempotencyRecordRow } from './schema.ts';

export interface IdempotencyKeyRef {
  workspaceId: string;
  key: string;
}

export async function findIdempotencyRecord(
  db: Kysely<Database>,
  ref: IdempotencyKeyRef,
  now: number,
): Promise<IdempotencyRecordRow | undefined> {
  return db
    .selectFrom('idempotency_records')
    .selectAll()
    .where('workspace_id', '=', ref.workspaceId)
    .where('idempotency_key', '=', ref.key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
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
