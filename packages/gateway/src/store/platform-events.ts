/**
 * SQL behind the platform's webhook events (POST /platform/zns/events): the sender account that
 * signs them, the message a delivery event is about, the de-duplication record, the delivered
 * transition, the customer webhook outbox row and the template status sync. Written once with
 * Kysely for SQLite and PostgreSQL (both support INSERT … ON CONFLICT DO NOTHING RETURNING).
 */
import type { Kysely } from 'kysely';
import type { Transaction } from './database.ts';
import type { ApiKeyRow, Database, MessageRow, PlatformEventRow, SenderAccountRow, TemplateStatus, WebhookDeliveryRow } from './schema.ts';

/** A sender account by the platform's OA id alone (oa_id is unique across workspaces). */
export async function findSenderAccountByOaId(db: Kysely<Database>, oaId: string): Promise<SenderAccountRow | undefined> {
  return db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirst();
}

export type EventMessage = Pick<MessageRow, 'id' | 'status'>;

/**
 * The message a delivery event is about, within the sender account's workspace and OA: first by
 * our msg_id (sent to the platform as tracking_id), then by the platform's msg_id.
 */
export async function findMessageForEvent(
  db: Kysely<Database>,
  where: { workspaceId: string; oaId: string; trackingId: string | null; providerMsgId: string },
): Promise<EventMessage | undefined> {
  if (where.trackingId) {
    const byId = await db
      .selectFrom('messages')
      .select(['id', 'status'])
      .where('id', '=', where.trackingId)
      .where('workspace_id', '=', where.workspaceId)
      .where('oa_id', '=', where.oaId)
      .executeTakeFirst();
    if (byId) return byId;
  }
  return db
    .selectFrom('messages')
    .select(['id', 'status'])
    .where('provider_msg_id', '=', where.providerMsgId)
    .where('workspace_id', '=', where.workspaceId)
    .where('oa_id', '=', where.oaId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
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

/** The states a delivery report may move to delivered: an event can beat the dispatcher's own 'sent' record. */
const DELIVERABLE_STATUSES = ['queued', 'sending', 'sent'] as const;

export type DeliveredMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'api_key_id' | 'tracking_id' | 'oa_id' | 'phone' | 'provider_msg_id' | 'delivered_at'>;

/**
 * queued | sending | sent → delivered in one conditional statement; failed and delivered rows are
 * never touched. Keeps a provider_msg_id already recorded, erases the RSA ciphertext and any
 * error left by an earlier transient fault. Returns the row when it changed.
 */
export async function markMessageDelivered(
  trx: Transaction,
  change: { id: string; deliveredAt: number; providerMsgId: string; now: number },
): Promise<DeliveredMessage | undefined> {
  return trx
    .updateTable('messages')
    .set((eb) => ({
      status: 'delivered',
      delivered_at: change.deliveredAt,
      provider_msg_id: eb.fn.coalesce('provider_msg_id', eb.val(change.providerMsgId)),
      rsa_phone: null,
      lease_expires_at: null,
      error_code: null,
      error_message: null,
      error_reason: null,
      updated_at: change.now,
    }))
    .where('id', '=', change.id)
    .where('status', 'in', DELIVERABLE_STATUSES)
    .returning(['id', 'workspace_id', 'api_key_id', 'tracking_id', 'oa_id', 'phone', 'provider_msg_id', 'delivered_at'])
    .executeTakeFirst();
}

export async function findWebhookTarget(db: Kysely<Database>, apiKeyId: string): Promise<Pick<ApiKeyRow, 'webhook_url' | 'revoked_at'> | undefined> {
  return db.selectFrom('api_keys').select(['webhook_url', 'revoked_at']).where('id', '=', apiKeyId).executeTakeFirst();
}

/** One outbox row per message (message_id is unique): a second insert for the same message is a no-op. */
export async function insertWebhookDelivery(trx: Transaction, row: WebhookDeliveryRow): Promise<boolean> {
  const inserted = await trx
    .insertInto('webhook_deliveries')
    .values(row)
    .onConflict((conflict) => conflict.column('message_id').doNothing())
    .returning('id')
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
