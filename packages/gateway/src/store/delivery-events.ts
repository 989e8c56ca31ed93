/**
 * SQL of delivery events applied in groups (infrastructure/delivery-event-writer.ts): a handful of
 * statements for a whole group of events instead of four per event, written once for SQLite and
 * PostgreSQL. The inserts are built as SQL text (bulk-insert.ts) and the delivered transition
 * sends its rows as one JSON parameter (bulk-update.ts): building Kysely query trees of many rows
 * cost more than running them. Table and column names come from our own code, never from input.
 */
import { sql } from 'kysely';
import { insertRows } from './bulk-insert.ts';
import { updateRows } from './bulk-update.ts';
import type { Dialect, Transaction } from './database.ts';
import type { ApiKeyRow, MessageRow, PlatformEventRow, WebhookDeliveryRow } from './schema.ts';

/** Records events not seen before; returns the keys recorded now (the others were applied before). */
export async function recordDeliveryEvents(trx: Transaction, dialect: Dialect, rows: readonly PlatformEventRow[]): Promise<Set<string>> {
  const inserted = await insertRows(trx, dialect, 'platform_events', rows, { column: 'event_key', returning: 'event_key' });
  return new Set(inserted.map((row) => String(row.event_key)));
}

/** A message that became delivered: what its delivery report is made of. */
export type DeliveredMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'api_key_id' | 'tracking_id' | 'oa_id' | 'phone' | 'provider_msg_id' | 'delivered_at'>;

const DELIVERED_COLUMNS = ['id', 'workspace_id', 'api_key_id', 'tracking_id', 'oa_id', 'phone', 'provider_msg_id', 'delivered_at'] as const;

/**
 * queued | sending | sent → delivered (an event can beat the dispatcher's own 'sent' record), one
 * statement for the group (one change per message); failed and delivered rows are never touched.
 * Keeps a provider_msg_id already recorded, erases the RSA ciphertext and any error left by an
 * earlier transient fault. Returns the rows that changed.
 */
export async function markMessagesDelivered(
  trx: Transaction,
  dialect: Dialect,
  changes: readonly { id: string; deliveredAt: number; providerMsgId: string }[],
  now: number,
): Promise<DeliveredMessage[]> {
  if (changes.length === 0) return [];
  const rows = await updateRows<DeliveredMessage>(trx, dialect, {
    table: 'messages',
    types: { delivered_time: 'bigint', platform_msg_id: 'text' },
    rows: changes.map((change) => ({ id: change.id, delivered_time: change.deliveredAt, platform_msg_id: change.providerMsgId })),
    set: sql`status = 'delivered', delivered_at = x.delivered_time,
      provider_msg_id = COALESCE(messages.provider_msg_id, x.platform_msg_id),
      rsa_phone = NULL, lease_expires_at = NULL, error_code = NULL, error_message = NULL, error_reason = NULL, updated_at = ${now}`,
    where: sql`messages.status IN ('queued', 'sending', 'sent')`,
    returning: DELIVERED_COLUMNS,
  });
  return rows.map((row) => ({ ...row, delivered_at: row.delivered_at === null ? null : Number(row.delivered_at) }));
}

export type WebhookTarget = Pick<ApiKeyRow, 'id' | 'webhook_url' | 'revoked_at'>;

/** The webhook URL (and revocation) of each key, by key id. */
export async function findWebhookTargets(trx: Transaction, apiKeyIds: readonly string[]): Promise<Map<string, WebhookTarget>> {
  if (apiKeyIds.length === 0) return new Map();
  const rows = await trx.selectFrom('api_keys').select(['id', 'webhook_url', 'revoked_at']).where('id', 'in', apiKeyIds).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** Outbox rows; one per message (message_id is unique): a second one for the same message is a no-op. */
export async function insertWebhookDeliveries(trx: Transaction, dialect: Dialect, rows: readonly WebhookDeliveryRow[]): Promise<void> {
  await insertRows(trx, dialect, 'webhook_deliveries', rows, { column: 'message_id', returning: 'id' });
}
