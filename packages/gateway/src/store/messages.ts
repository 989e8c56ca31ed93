import { sql, type Kysely, type RawBuilder } from 'kysely';
import { refundMessages } from './acceptances.ts';
import { compiledOnce } from './compiled-query.ts';
import type { Dialect, Store, Transaction } from './database.ts';
import { MESSAGE_RECORD_COLUMNS, selectMessageRecords } from './message-records.ts';
import { SQLITE_PHONE_INDEX, sentToPhone } from './phone-index.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';
import type { Database, MessageRow, MessageStatus } from './schema.ts';

/** One message of a workspace by its id, as findMessage runs it (the query-plan test explains this very query). */
export function findMessageQuery(db: Kysely<Database>, workspaceId: string, id: string) {
  return selectMessageRecords(db).where('m.workspace_id', '=', workspaceId).where('m.id', '=', id);
}

// Compiled once: a console or an integrator polling messages by id asks this more than anything else.
const findMessageStatement = compiledOnce<[string, string], MessageRow>(findMessageQuery, 2);

export async function findMessage(db: Kysely<Database>, workspaceId: string, id: string): Promise<MessageRow | undefined> {
  const [row] = await findMessageStatement(db, workspaceId, id);
  return row;
}

/** A message by its id, whichever workspace holds it (the operator's support lookup). */
export async function findMessageInAnyWorkspace(db: Kysely<Database>, id: string): Promise<MessageRow | undefined> {
  return selectMessageRecords(db).where('m.id', '=', id).executeTakeFirst();
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
 * The index SQLite must read for a filter: the first filter of this list that is given, and the
 * table that holds it (m: messages, s: message_states). SQLite keeps no statistics here (the
 * gateway runs no ANALYZE), and without them it prefers the index that yields created_at order
 * (messages_by_workspace_time) and filters row by row: a million rows read for a tracking_id, or
 * for a status no message has. Each of these indexes finds the filter's rows in created_at order
 * itself (the tracking_id one holds few rows per value, sorted after; the phone one, the run of the
 * number's last two digits, filtered inside the index), so the newest page is read and no more.
 * PostgreSQL plans by its own statistics.
 */
const SQLITE_INDEX_BY_FILTER: readonly [keyof MessageFilter, string, 'm' | 's'][] = [
  ['trackingId', 'messages_by_workspace_tracking', 'm'],
  ['phone', SQLITE_PHONE_INDEX, 'm'],
  ['templateId', 'messages_by_workspace_template', 'm'],
  ['status', 'message_states_by_workspace_status', 's'],
  ['oaId', 'messages_by_workspace_oa', 'm'],
];

export interface MessagePageWindow {
  limit: number;
  offset: number;
}

/**
 * One page of a workspace's messages, newest first, as listMessages runs it (the query-plan test
 * explains this very statement); one row more than the page, so the caller can tell whether more exist.
 * The page's ids are found first, in the table whose index serves the filter (message_states for a
 * status, which also holds each message's sender account), reading the workspace, the times and
 * the order from that table: both tables hold the same workspace, sender account and created_at
 * for a message. The states are joined there only when a status is given beside a filter of
 * messages; the whole messages are read for the page alone, so an offset skips entries of one
 * index and nothing else.
 */
export function listMessagesQuery(dialect: Dialect, workspaceId: string, filter: MessageFilter, page: MessagePageWindow): RawBuilder<MessageRow> {
  const chosen = SQLITE_INDEX_BY_FILTER.find(([name]) => filter[name] !== undefined);
  const driving = chosen?.[2] ?? 'm';
  const drivingTable = sql.raw(driving);
  const conditions = [sql`${drivingTable}.workspace_id = ${workspaceId}`];
  if (filter.trackingId !== undefined) conditions.push(sql`m.tracking_id = ${filter.trackingId}`);
  if (filter.phone !== undefined) conditions.push(sentToPhone(dialect, filter.phone));
  if (filter.status !== undefined) conditions.push(sql`s.status = ${filter.status}`);
  if (filter.templateId !== undefined) conditions.push(sql`m.template_id = ${filter.templateId}`);
  if (filter.oaId !== undefined) conditions.push(sql`${drivingTable}.oa_id = ${filter.oaId}`);
  if (filter.from !== undefined) conditions.push(sql`${drivingTable}.created_at >= ${filter.from}`);
  if (filter.to !== undefined) conditions.push(sql`${drivingTable}.created_at <= ${filter.to}`);
  const index = dialect === 'sqlite' && chosen !== undefined ? sql` INDEXED BY ${sql.id(chosen[1])}` : sql``;
  // message_states drives only when no filter of messages is given (the order of the list above);
  // messages drives and needs the states for a status beside its own filter.
  const tables =
    driving === 's'
      ? sql`message_states s${index}`
      : sql`messages m${index}${filter.status !== undefined ? sql` JOIN message_states s ON s.id = m.id` : sql``}`;
  return sql<MessageRow>`
    SELECT ${PLANNED_PER_RUN} ${MESSAGE_RECORD_COLUMNS} FROM (
      SELECT ${drivingTable}.id, ${drivingTable}.created_at FROM ${tables} WHERE ${sql.join(conditions, sql` AND `)}
      ORDER BY ${drivingTable}.created_at DESC, ${drivingTable}.id DESC LIMIT ${page.limit + 1} OFFSET ${page.offset}
    ) AS page
    JOIN messages m ON m.id = page.id JOIN message_states s ON s.id = page.id
    ORDER BY page.created_at DESC, page.id DESC`;
}

/** Newest first; asks for one row more than the page so the caller can tell whether more exist. */
export async function listMessages(store: Pick<Store, 'db' | 'dialect'>, workspaceId: string, filter: MessageFilter, page: MessagePageWindow): Promise<MessageRow[]> {
  const result = await listMessagesQuery(store.dialect, workspaceId, filter, page).execute(store.db);
  return result.rows;
}

export type CancelOutcome = { kind: 'cancelled' } | { kind: 'not_found' } | { kind: 'not_queued'; status: MessageStatus };

/**
 * Deletes a queued message, its state and then its row, and refunds it; the status check and the
 * state's delete are one statement. The message's rows are locked before its quota row and
 * wallet: the lock order of acceptances.ts.
 */
export async function cancelQueuedMessage(trx: Transaction, workspaceId: string, id: string, now: number): Promise<CancelOutcome> {
  const cancelled = await trx
    .deleteFrom('message_states')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .returning('id')
    .executeTakeFirst();
  if (!cancelled) {
    const existing = await trx.selectFrom('message_states').select('status').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return existing ? { kind: 'not_queued', status: existing.status } : { kind: 'not_found' };
  }
  const deleted = await trx.deleteFrom('messages').where('id', '=', id).returning(['id', 'workspace_id', 'price', 'oa_id', 'quota_day']).executeTakeFirstOrThrow();
  await refundMessages(trx, [deleted], now);
  return { kind: 'cancelled' };
}

export async function readQuotaReservations(db: Kysely<Database>, oaIds: string[], day: string): Promise<Map<string, number>> {
  if (oaIds.length === 0) return new Map();
  const rows = await db.selectFrom('quota_reservations').select(['oa_id', 'reserved']).where('oa_id', 'in', oaIds).where('day', '=', day).execute();
  return new Map(rows.map((row) => [row.oa_id, row.reserved]));
}
