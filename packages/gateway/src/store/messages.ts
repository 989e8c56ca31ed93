import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { refundMessages } from './acceptances.ts';
import type { Dialect, Store, Transaction } from './database.ts';
import type { Database, MessageRow, MessageStatus } from './schema.ts';

/** One message of a workspace by its id, as findMessage runs it (the query-plan test explains this very query). */
export function findMessageQuery(db: Kysely<Database>, workspaceId: string, id: string): SelectQueryBuilder<Database, 'messages', MessageRow> {
  return db.selectFrom('messages').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
}

export async function findMessage(db: Kysely<Database>, workspaceId: string, id: string): Promise<MessageRow | undefined> {
  return findMessageQuery(db, workspaceId, id).executeTakeFirst();
}

/** A message by its id, whichever workspace holds it (the operator's support lookup). */
export async function findMessageInAnyWorkspace(db: Kysely<Database>, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface MessageFilter {
  trackingId?: string;
  phone?: string;
  status?: MessageStatus;
  templateId?: string;
  oaId?: string;
  from?: number;
  to?: number;
}

/**
 * The index SQLite must read for a filter: the first filter of this list that is given. SQLite
 * keeps no statistics here (the gateway runs no ANALYZE), and without them it prefers the index
 * that yields created_at order (messages_by_workspace_time) and filters row by row: a million
 * rows read for a tracking_id, or for a status no message has. Each of these indexes finds the
 * filter's rows in created_at order itself (the phone and tracking_id ones hold few rows per
 * value, sorted after), so the newest page is read and no more. PostgreSQL plans by its own
 * statistics.
 */
const SQLITE_INDEX_BY_FILTER: readonly [keyof MessageFilter, string][] = [
  ['trackingId', 'messages_by_workspace_tracking'],
  ['phone', 'messages_by_workspace_phone'],
  ['templateId', 'messages_by_workspace_template'],
  ['status', 'messages_by_workspace_status'],
  ['oaId', 'messages_by_workspace_oa'],
];

export interface MessagePageWindow {
  limit: number;
  offset: number;
}

/**
 * One page of a workspace's messages, newest first, as listMessages runs it (the query-plan test
 * explains this very statement); one row more than the page, so the caller can tell whether more exist.
 */
export function listMessagesQuery(dialect: Dialect, workspaceId: string, filter: MessageFilter, page: MessagePageWindow): RawBuilder<MessageRow> {
  const conditions = [sql`workspace_id = ${workspaceId}`];
  if (filter.trackingId !== undefined) conditions.push(sql`tracking_id = ${filter.trackingId}`);
  if (filter.phone !== undefined) conditions.push(sql`phone = ${filter.phone}`);
  if (filter.status !== undefined) conditions.push(sql`status = ${filter.status}`);
  if (filter.templateId !== undefined) conditions.push(sql`template_id = ${filter.templateId}`);
  if (filter.oaId !== undefined) conditions.push(sql`oa_id = ${filter.oaId}`);
  if (filter.from !== undefined) conditions.push(sql`created_at >= ${filter.from}`);
  if (filter.to !== undefined) conditions.push(sql`created_at <= ${filter.to}`);
  const index = dialect === 'sqlite' ? SQLITE_INDEX_BY_FILTER.find(([name]) => filter[name] !== undefined)?.[1] : undefined;
  const table = index === undefined ? sql`messages` : sql`messages INDEXED BY ${sql.id(index)}`;
  return sql<MessageRow>`
    SELECT * FROM ${table} WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY created_at DESC, id DESC LIMIT ${page.limit + 1} OFFSET ${page.offset}`;
}

/** Newest first; asks for one row more than the page so the caller can tell whether more exist. */
export async function listMessages(store: Pick<Store, 'db' | 'dialect'>, workspaceId: string, filter: MessageFilter, page: MessagePageWindow): Promise<MessageRow[]> {
  const result = await listMessagesQuery(store.dialect, workspaceId, filter, page).execute(store.db);
  return result.rows;
}

export type CancelOutcome = { kind: 'cancelled' } | { kind: 'not_found' } | { kind: 'not_queued'; status: MessageStatus };

/**
 * Deletes a queued message and refunds it; the status check and the delete are one statement.
 * The message row is locked before its quota row and wallet: the lock order of acceptances.ts.
 */
export async function cancelQueuedMessage(trx: Transaction, workspaceId: string, id: string, now: number): Promise<CancelOutcome> {
  const deleted = await trx
    .deleteFrom('messages')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .returning(['id', 'workspace_id', 'price', 'oa_id', 'quota_day'])
    .executeTakeFirst();
  if (!deleted) {
    const existing = await trx.selectFrom('messages').select('status').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return existing ? { kind: 'not_queued', status: existing.status } : { kind: 'not_found' };
  }
  await refundMessages(trx, [deleted], now);
  return { kind: 'cancelled' };
}

export async function readQuotaReservations(db: Kysely<Database>, oaIds: string[], day: string): Promise<Map<string, number>> {
  if (oaIds.length === 0) return new Map();
  const rows = await db.selectFrom('quota_reservations').select(['oa_id', 'reserved']).where('oa_id', 'in', oaIds).where('day', '=', day).execute();
  return new Map(rows.map((row) => [row.oa_id, row.reserved]));
}
