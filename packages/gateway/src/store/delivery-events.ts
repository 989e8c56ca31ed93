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
import { eraseRsaPhones, isOneOf } from './message-records.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';
import type { ApiKeyRow, MessageRow, WebhookDeliveryRow } from './schema.ts';

/** A message that became delivered: what its delivery report is made of. */
export type DeliveredMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'api_key_id' | 'tracking_id' | 'oa_id' | 'phone' | 'provider_msg_id' | 'delivered_at'>;

type DeliveredState = Pick<MessageRow, 'id' | 'provider_msg_id' | 'delivered_at'>;

/**
 * queued | sending | sent → delivered (an event can beat the dispatcher's own 'sent' record), one
 * statement for the group (one change per message); failed and delivered messages are never
 * touched. Keeps a provider_msg_id already recorded and clears any error left by an earlier
 * transient fault; then reads what the reports need of the changed messages and erases the RSA
 * ciphertext of those that had one. Returns the messages that changed.
 */
export async function markMessagesDelivered(
  trx: Transaction,
  dialect: Dialect,
  changes: readonly { id: string; deliveredAt: number; providerMsgId: string }[],
  now: number,
): Promise<DeliveredMessage[]> {
  if (changes.length === 0) return [];
  const states = await updateRows<DeliveredState>(trx, dialect, {
    table: 'message_states',
    types: { delivered_time: 'bigint', platform_msg_id: 'text' },
    rows: changes.map((change) => ({ id: change.id, delivered_time: change.deliveredAt, platform_msg_id: change.providerMsgId })),
    set: sql`status = 'delivered', delivered_at = x.delivered_time,
      provider_msg_id = COALESCE(message_states.provider_msg_id, x.platform_msg_id),
      lease_expires_at = NULL, error_code = NULL, error_message = NULL, error_reason = NULL, updated_at = ${now}`,
    where: sql`message_states.status IN ('queued', 'sending', 'sent')`,
    returning: ['id', 'provider_msg_id', 'delivered_at'],
  });
  if (states.length === 0) return [];
  const { rows } = await sql<Pick<MessageRow, 'id' | 'workspace_id' | 'api_key_id' | 'tracking_id' | 'oa_id' | 'phone'> & { holds_rsa_phone: number | boolean }>`
    ${PLANNED_PER_RUN} SELECT id, workspace_id, api_key_id, tracking_id, oa_id, phone, rsa_phone IS NOT NULL AS holds_rsa_phone
    FROM messages WHERE ${isOneOf(dialect, sql`id`, states.map((state) => state.id))}`.execute(trx);
  await eraseRsaPhones(trx, dialect, rows.filter((row) => Boolean(row.holds_rsa_phone)).map((row) => row.id));
  const messages = new Map(rows.map((row) => [row.id, row]));
  return states.map((state) => {
    const { id, workspace_id, api_key_id, tracking_id, oa_id, phone } = messages.get(state.id)!;
    return { id, workspace_id, api_key_id, tracking_id, oa_id, phone, provider_msg_id: state.provider_msg_id, delivered_at: state.delivered_at === null ? null : Number(state.delivered_at) };
  });
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
  await insertRows(trx, dialect, 'webhook_deliveries', rows, { conflict: { column: 'message_id', returning: 'id' } });
}
