/**
 * SQL behind the platform's webhook events (POST /platform/zns/events): the sender account that
 * signs them, the message a delivery event is about, the de-duplication record and the template
 * status sync. (The delivered transition and the outbox row, applied in groups: delivery-events.ts.)
 * Written once with Kysely for SQLite and PostgreSQL (both support INSERT … ON CONFLICT DO NOTHING
 * RETURNING).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect, Transaction } from './database.ts';
import type { Database, MessageRow, PlatformEventRow, SenderAccountRow, TemplateStatus } from './schema.ts';

/** A sender account by the platform's OA id alone (oa_id is unique across workspaces). */
export async function findSenderAccountByOaId(db: Kysely<Database>, oaId: string): Promise<SenderAccountRow | undefined> {
  return db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirst();
}

/** Whose a message is: what an event's sender account must match to deliver it. */
export type EventMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'oa_id'>;

/**
 * Messages by our msg_id (the platform sends it back as tracking_id), many at once: one statement
 * for a whole group of events, and one statement text whatever their number (a JSON array on
 * SQLite, a text[] on PostgreSQL), so it is prepared once. The caller checks the workspace and OA:
 * with them in the WHERE, PostgreSQL planned a table that grew since its last ANALYZE through the
 * (workspace_id, oa_id, created_at) index, scanning the whole workspace for every event.
 */
export function eventMessagesByIdQuery(dialect: Dialect, ids: readonly string[]): RawBuilder<EventMessage> {
  const wanted = dialect === 'postgres' ? sql`id = ANY(${[...ids]}::text[])` : sql`id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  return sql<EventMessage>`SELECT id, workspace_id, oa_id FROM messages WHERE ${wanted}`;
}

export async function findEventMessagesById(trx: Transaction, dialect: Dialect, ids: readonly string[]): Promise<EventMessage[]> {
  if (ids.length === 0) return [];
  return (await eventMessagesByIdQuery(dialect, ids).execute(trx)).rows;
}

/**
 * The sent messages with this platform msg_id. Only a sent message can still be delivered by an
 * event that does not name it (the index holds only those); a queued or sending one has no platform
 * msg_id recorded yet.
 */
export function sentMessagesByProviderIdQuery(db: Kysely<Database>, providerMsgId: string) {
  return db.selectFrom('messages').select(['id', 'workspace_id', 'oa_id']).where('provider_msg_id', '=', providerMsgId)
    // A literal, so that the planner sees the partial index's condition in the statement itself.
    .where('status', '=', sql.lit('sent'))
    .orderBy('id');
}

/** Inserts the event's key unless it is already there; true when this call inserted it. */
export async function recordPlatformEvent(trx: Transaction, row: PlatformEventRow): Promise<boolean> {
  const inserted = await trx
    .insertInto('platform_events')
    .values(row)
    .onConflict((conflict) => conflict.column('event_key').doNothing())
    .returning('event_key')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The platform's new review status of one OA's template; the operator's price and the rest stay. */
export async function setTemplateStatusFromPlatform(
  trx: Transaction,
  change: { workspaceId: string; oaId: string; templateId: string; status: TemplateStatus; now: number },
): Promise<boolean> {
  const updated = await trx
    .updateTable('templates')
    .set({ status: change.status, updated_at: change.now })
    .where('template_id', '=', change.templateId)
    .where('workspace_id', '=', change.workspaceId)
    .where('oa_id', '=', change.oaId)
    .returning('template_id')
    .executeTakeFirst();
  return updated !== undefined;
}
