/**
 * SQL behind the platform's webhook events (POST /platform/zns/events): the sender account that
 * signs them, the message a delivery event is about, the de-duplication record and the template
 * status sync. (The delivered transition and the outbox row, applied in groups: delivery-events.ts.)
 * Written once with Kysely for SQLite and PostgreSQL (both support INSERT … ON CONFLICT DO NOTHING
 * RETURNING).
 */
import { sql, type Kysely } from 'kysely';
import { compiledOnce } from './compiled-query.ts';
import type { Transaction } from './database.ts';
import type { Database, MessageRow, PlatformEventRow, SenderAccountRow, TemplateStatus } from './schema.ts';

/** A sender account by the platform's OA id alone (oa_id is unique across workspaces). */
export async function findSenderAccountByOaId(db: Kysely<Database>, oaId: string): Promise<SenderAccountRow | undefined> {
  return db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirst();
}

export type EventMessage = Pick<MessageRow, 'id' | 'status'>;

/**
 * The message a delivery event is about, within the sender account's workspace and OA: first by
 * our msg_id (sent to the platform as tracking_id), then by the platform's msg_id among the sent
 * messages.
 *
 * Each lookup names only its own key and the workspace and OA are checked here: with them in the
 * WHERE, PostgreSQL planned a table that grew since its last ANALYZE through the (workspace_id,
 * oa_id, created_at) index, scanning the whole workspace for every event.
 */
const selectEventMessageById = compiledOnce<[string], EventMessage & Pick<MessageRow, 'workspace_id' | 'oa_id'>>(
  (db, id) => db.selectFrom('messages').select(['id', 'status', 'workspace_id', 'oa_id']).where('id', '=', id),
  1,
);

/**
 * The sent messages with this platform msg_id. Only a sent message can still be delivered by an
 * event that does not name it (the index holds only those); a queued or sending one has no platform
 * msg_id recorded yet.
 */
export function sentMessagesByProviderIdQuery(db: Kysely<Database>, providerMsgId: string) {
  return db.selectFrom('messages').select(['id', 'status', 'workspace_id', 'oa_id']).where('provider_msg_id', '=', providerMsgId)
    // A literal, so that the planner sees the partial index's condition in the statement itself.
    .where('status', '=', sql.lit('sent'))
    .orderBy('id');
}

export async function findMessageForEvent(
  db: Kysely<Database>,
  where: { workspaceId: string; oaId: string; trackingId: string | null; providerMsgId: string },
): Promise<EventMessage | undefined> {
  const ours = (row: EventMessage & Pick<MessageRow, 'workspace_id' | 'oa_id'>) => row.workspace_id === where.workspaceId && row.oa_id === where.oaId;
  if (where.trackingId) {
    const [byId] = await selectEventMessageById(db, where.trackingId);
    if (byId && ours(byId)) return { id: byId.id, status: byId.status };
  }
  const byProviderId = await sentMessagesByProviderIdQuery(db, where.providerMsgId).execute();
  const found = byProviderId.find(ours);
  return found ? { id: found.id, status: found.status } : undefined;
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
