/**
 * SQL behind the platform's webhook events (POST /platform/zns/events): the sender account that
 * signs them, the message a delivery event is about, the de-duplication record of template status
 * events and the template status sync. (The delivered transition and the outbox row, applied in
 * groups: delivery-events.ts.)
 * Written once with Kysely for SQLite and PostgreSQL (both support INSERT … ON CONFLICT DO NOTHING
 * RETURNING).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect, Transaction } from './database.ts';
import { isOneOf } from './message-records.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';
import type { Database, MessageRow, PlatformEventRow, SenderAccountRow, TemplateStatus } from './schema.ts';

/** A sender account by the platform's OA id alone (oa_id is unique across workspaces). */
export async function findSenderAccountByOaId(db: Kysely<Database>, oaId: string): Promise<SenderAccountRow | undefined> {
  return db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirst();
}

/** Whose a message is: what an event's sender account must match to deliver it. */
type EventMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'oa_id'>;

/**
 * Messages by our msg_id (the platform sends it back as tracking_id), many at once: one statement
 * for a whole group of events, and one statement text whatever their number. The caller checks
 * the workspace and OA: with them in the WHERE, PostgreSQL planned a table that grew since its
 * last ANALYZE through the (workspace_id, oa_id, created_at) index, scanning the whole workspace
 * for every event.
 */
export function eventMessagesByIdQuery(dialect: Dialect, ids: readonly string[]): RawBuilder<EventMessage> {
  return sql<EventMessage>`${PLANNED_PER_RUN} SELECT id, workspace_id, oa_id FROM messages WHERE ${isOneOf(dialect, sql`id`, ids)}`;
}

/**
 * The sent messages with this platform msg_id. Only a sent message can still be delivered by an
 * event that does not name it (the index holds only those); a queued or sending one has no platform
 * msg_id recorded yet.
 */
export function sentMessagesByProviderIdQuery(db: Kysely<Database>, providerMsgId: string) {
  return db.selectFrom('message_states').select(['id', 'workspace_id', 'oa_id']).where('provider_msg_id', '=', providerMsgId)
    // A literal, so that the planner sees the partial index's condition in the statement itself.
    .where('status', '=', sql.lit('sent'))
    .orderBy('id');
}

/**
 * Our message, by its id when the caller knows it (a delivery check), or by what a platform event
 * names it with, found within the sender account's workspace and OA: our msg_id (the platform sends
 * it back as tracking_id), else the platform's msg_id among the sent messages.
 */
export type EventMessageReference = { id: string } | { trackingId: string | null; workspaceId: string };

/**
 * Each event's message id, or null when no message of its sender account's workspace and OA
 * matches it. The msg_ids the events name are looked up together, in one statement for the group;
 * the platform's msg_id is asked only for an event whose tracking_id names none of ours.
 */
export async function findEventMessages(
  trx: Transaction,
  dialect: Dialect,
  events: readonly { message: EventMessageReference; platformMsgId: string; oaId: string }[],
): Promise<(string | null)[]> {
  const trackingIds = new Set<string>();
  for (const { message } of events) if ('trackingId' in message && message.trackingId) trackingIds.add(message.trackingId);
  const tracked = trackingIds.size === 0 ? [] : (await eventMessagesByIdQuery(dialect, [...trackingIds]).execute(trx)).rows;
  const byId = new Map(tracked.map((message) => [message.id, message]));
  const ids: (string | null)[] = [];
  for (const event of events) {
    const reference = event.message;
    if ('id' in reference) {
      ids.push(reference.id);
      continue;
    }
    const ours = (message: EventMessage) => message.workspace_id === reference.workspaceId && message.oa_id === event.oaId;
    const named = reference.trackingId ? byId.get(reference.trackingId) : undefined;
    if (named && ours(named)) {
      ids.push(named.id);
      continue;
    }
    const sent = await sentMessagesByProviderIdQuery(trx, event.platformMsgId).execute();
    ids.push(sent.find(ours)?.id ?? null);
  }
  return ids;
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
