/**
 * Erasure of recipients' personal data from messages: the phone, the RSA ciphertext of the phone
 * and the template data. The record itself (ids, tracking_id, status, times, price, errors) stays,
 * so lists, disputes and the ledger still add up. Only messages the platform already has, or
 * refused for good, are erased (sent, delivered, failed): queued and sending ones still need theirs.
 *
 * Erased template_data is the JSON text 'null' (the column is NOT NULL; making it nullable would
 * rebuild the largest table on SQLite). It marks the message erased, and the partial index
 * messages_holding_personal_data (migration 0011) holds only the messages not yet erased.
 */
import { sql, type RawBuilder } from 'kysely';
import { runInTransaction, type Dialect, type Store, type Transaction } from './database.ts';
import { SQLITE_PHONE_INDEX, sentToPhone } from './phone-index.ts';

/** What template_data holds once erased. */
export const ERASED_TEMPLATE_DATA = 'null';

// Written as literals: SQLite (and PostgreSQL, for a partial index) use the index only when the
// query's own text implies its condition.
const HOLDING_PERSONAL_DATA = sql`template_data <> 'null'`;
const HANDED_OVER = sql`s.status IN ('sent', 'delivered', 'failed')`;
const ERASE = sql`phone = NULL, rsa_phone = NULL, template_data = 'null'`;
/** When the message finished: delivered, failed, or (no delivery report ever came) sent. */
const FINISHED_AT = sql`COALESCE(s.delivered_at, s.failed_at, s.sent_at, s.updated_at)`;

/**
 * The oldest messages still holding personal data that finished before `finishedBefore`, as the
 * retention sweep selects them (the query-plan test explains this very statement). It walks the
 * partial index from its oldest entry: a message finishes after it was created, so created_at
 * bounds the walk, and what it passes over is only the few old messages not finished yet. Each
 * message's state is read by its id in a subquery, not joined: a join let PostgreSQL, without
 * statistics, walk the status index of every finished message instead.
 */
export function expiredPersonalDataQuery(dialect: Dialect, input: { finishedBefore: number; limit: number }): RawBuilder<{ id: string }> {
  const table = dialect === 'sqlite' ? sql`messages m INDEXED BY messages_holding_personal_data` : sql`messages m`;
  // Messages another sweep or a purge holds right now are left for the next round.
  const lock = dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  return sql<{ id: string }>`
    SELECT m.id FROM ${table}
    WHERE m.${HOLDING_PERSONAL_DATA} AND m.created_at < ${input.finishedBefore}
      AND (SELECT ${HANDED_OVER} AND ${FINISHED_AT} < ${input.finishedBefore} FROM message_states s WHERE s.id = m.id)
    ORDER BY m.created_at LIMIT ${input.limit} ${lock}`;
}

/**
 * Erases personal data from these messages (still holding it); returns the ids erased. Only
 * `messages` is written: the state of a send (message_states, its updated_at included) does not
 * change. The caller chose messages already handed over (sent, delivered, failed): a message
 * never goes back from those to queued or sending.
 */
async function eraseMessages(trx: Transaction, ids: RawBuilder<unknown>): Promise<string[]> {
  const erased = await sql<{ id: string }>`
    UPDATE messages SET ${ERASE} WHERE id IN (${ids}) AND ${HOLDING_PERSONAL_DATA} RETURNING id`.execute(trx);
  return erased.rows.map((row) => row.id);
}

/**
 * Erases up to `limit` messages that finished before `finishedBefore`, oldest first, in one
 * transaction. Returns how many were erased; fewer than `limit` means none is left for now.
 */
export async function eraseExpiredPersonalData(store: Store, input: { finishedBefore: number; limit: number }): Promise<number> {
  return runInTransaction(store, async (trx) => (await eraseMessages(trx, expiredPersonalDataQuery(store.dialect, input))).length);
}

/** Which of one workspace's messages a purge erases. */
export interface WorkspacePurgeScope {
  workspaceId: string;
  /** Only this (normalised) phone's messages. */
  phone?: string;
  /** Only messages created before this time. */
  createdBefore?: number;
}

/** Where a purge has got to in the workspace's messages, in (created_at, id) order. */
export interface PurgeCursor {
  createdAt: number;
  id: string;
}

export interface PurgeWindow {
  /** Messages erased in this window. */
  erased: number;
  /** Messages of the window still queued or sending, so left as they are. */
  inFlight: number;
  /** Ids of the messages erased (their delivery reports carry the phone too). */
  erasedIds: string[];
  /** Where the next window starts; null when the workspace's messages are all read. */
  next: PurgeCursor | null;
}

/**
 * Erases the personal data of one window of a workspace's messages (up to `limit`, oldest first,
 * after `after`), in one transaction. A purge walks the workspace window by window, so each
 * transaction is short and no window reads what an earlier one already passed. The phone's own
 * index serves a purge of one phone; the workspace's time index serves the rest.
 */
export async function erasePersonalDataWindow(store: Store, scope: WorkspacePurgeScope, input: { after: PurgeCursor | null; limit: number }): Promise<PurgeWindow> {
  const conditions = [sql`m.workspace_id = ${scope.workspaceId}`];
  if (scope.phone !== undefined) conditions.push(sentToPhone(store.dialect, scope.phone));
  if (scope.createdBefore !== undefined) conditions.push(sql`m.created_at < ${scope.createdBefore}`);
  if (input.after !== null) conditions.push(sql`(m.created_at > ${input.after.createdAt} OR (m.created_at = ${input.after.createdAt} AND m.id > ${input.after.id}))`);
  const index = scope.phone !== undefined ? SQLITE_PHONE_INDEX : 'messages_by_workspace_time';
  const table = store.dialect === 'sqlite' ? sql`messages m INDEXED BY ${sql.id(index)}` : sql`messages m`;
  return runInTransaction(store, async (trx) => {
    const window = await sql<{ id: string; created_at: number; status: string; holding: number | boolean }>`
      SELECT m.id, m.created_at, s.status, m.${HOLDING_PERSONAL_DATA} AS holding FROM ${table} JOIN message_states s ON s.id = m.id
      WHERE ${sql.join(conditions, sql` AND `)}
      ORDER BY m.created_at, m.id LIMIT ${input.limit}`.execute(trx);
    const rows = window.rows;
    const last = rows.at(-1);
    const next = rows.length < input.limit || last === undefined ? null : { createdAt: Number(last.created_at), id: last.id };
    const holding = rows.filter((row) => Boolean(row.holding));
    const inFlight = holding.filter((row) => row.status === 'queued' || row.status === 'sending').length;
    const candidates = holding.filter((row) => row.status !== 'queued' && row.status !== 'sending').map((row) => row.id);
    if (candidates.length === 0) return { erased: 0, inFlight, erasedIds: [], next };
    const erasedIds = await eraseMessages(trx, sql.join(candidates));
    return { erased: erasedIds.length, inFlight, erasedIds, next };
  });
}

/**
 * Deletes the finished delivery reports (delivered, failed, cancelled) of erased messages, with
 * their attempt logs: a report's body names the phone. Pending reports still go out; the webhook
 * retention removes them later. Found by message_id, which is unique among reports.
 * Returns how many reports went.
 */
export async function deleteFinishedReportsOf(store: Store, messageIds: readonly string[]): Promise<number> {
  if (messageIds.length === 0) return 0;
  return runInTransaction(store, async (trx) => {
    const deleted = await trx
      .deleteFrom('webhook_deliveries')
      .where('message_id', 'in', [...messageIds])
      .where('status', 'in', ['delivered', 'failed', 'cancelled'])
      .returning('id')
      .execute();
    if (deleted.length > 0) await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deleted.map((row) => row.id)).execute();
    return deleted.length;
  });
}
