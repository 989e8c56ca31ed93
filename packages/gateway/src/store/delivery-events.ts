/**
 * SQL of delivery events applied in groups (infrastructure/delivery-event-writer.ts): a handful of
 * statements for a whole group of events instead of four per event, written once for SQLite and
 * PostgreSQL with sql`` templates (building Kysely query trees of many rows costs more than running
 * them). Table and column names come from our own code, never from input.
 */
import { sql } from 'kysely';
import type { Transaction } from './database.ts';
import type { ApiKeyRow, MessageRow, PlatformEventRow, WebhookDeliveryRow } from './schema.ts';

/** Rows per statement, largest first: powers of two, so the prepared-statement cache holds few shapes. */
const CHUNK_SIZES = [64, 32, 16, 8, 4, 2, 1];

function* chunksOf<T>(rows: readonly T[]): Generator<T[]> {
  for (let start = 0; start < rows.length; ) {
    const size = CHUNK_SIZES.find((candidate) => candidate <= rows.length - start) ?? 1;
    yield rows.slice(start, start + size);
    start += size;
  }
}

/** `INSERT … VALUES (…), (…) ON CONFLICT (key) DO NOTHING RETURNING …` in chunks; returns the returned rows. */
async function insertIgnoringConflicts<Row extends object>(
  trx: Transaction,
  table: string,
  columns: readonly (keyof Row & string)[],
  rows: readonly Row[],
  conflictColumn: string,
  returning: string,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const chunk of chunksOf(rows)) {
    // sql`` compiles the placeholders of each dialect (? or $n) without building a query tree.
    const tuples = sql.join(chunk.map((row) => sql`(${sql.join(columns.map((column) => row[column] ?? null))})`));
    const result = await sql<Record<string, unknown>>`
      INSERT INTO ${sql.raw(table)} (${sql.raw(columns.join(','))}) VALUES ${tuples}
      ON CONFLICT (${sql.raw(conflictColumn)}) DO NOTHING RETURNING ${sql.raw(returning)}`.execute(trx);
    out.push(...result.rows);
  }
  return out;
}

const EVENT_COLUMNS = ['event_key', 'event_name', 'oa_id', 'message_id', 'received_at'] as const;

/** Records events not seen before; returns the keys recorded now (the others were applied before). */
export async function recordDeliveryEvents(trx: Transaction, rows: readonly PlatformEventRow[]): Promise<Set<string>> {
  const inserted = await insertIgnoringConflicts(trx, 'platform_events', EVENT_COLUMNS, rows, 'event_key', 'event_key');
  return new Set(inserted.map((row) => String(row.event_key)));
}

/** A message that became delivered: what its delivery report is made of. */
export type DeliveredMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'api_key_id' | 'tracking_id' | 'oa_id' | 'phone' | 'provider_msg_id' | 'delivered_at'>;

/**
 * queued | sending | sent → delivered (an event can beat the dispatcher's own 'sent' record), one statement per chunk of messages (one change per
 * message); failed and delivered rows are never touched. Keeps a provider_msg_id already recorded,
 * erases the RSA ciphertext and any error left by an earlier transient fault. Returns the rows
 * that changed.
 */
export async function markMessagesDelivered(
  trx: Transaction,
  changes: readonly { id: string; deliveredAt: number; providerMsgId: string }[],
  now: number,
): Promise<DeliveredMessage[]> {
  const out: DeliveredMessage[] = [];
  for (const chunk of chunksOf(changes)) {
    const deliveredAt = sql.join(chunk.map((change) => sql`WHEN ${change.id} THEN CAST(${change.deliveredAt} AS bigint)`), sql` `);
    const providerIds = sql.join(chunk.map((change) => sql`WHEN ${change.id} THEN CAST(${change.providerMsgId} AS text)`), sql` `);
    const result = await sql<DeliveredMessage>`
      UPDATE messages
      SET status = 'delivered', delivered_at = CASE id ${deliveredAt} END,
          provider_msg_id = COALESCE(provider_msg_id, CASE id ${providerIds} END),
          rsa_phone = NULL, lease_expires_at = NULL, error_code = NULL, error_message = NULL, error_reason = NULL, updated_at = ${now}
      WHERE status IN ('queued', 'sending', 'sent') AND id IN (${sql.join(chunk.map((change) => change.id))})
      RETURNING id, workspace_id, api_key_id, tracking_id, oa_id, phone, provider_msg_id, delivered_at`.execute(trx);
    out.push(...result.rows.map((row) => ({ ...row, delivered_at: row.delivered_at === null ? null : Number(row.delivered_at) })));
  }
  return out;
}

export type WebhookTarget = Pick<ApiKeyRow, 'id' | 'webhook_url' | 'revoked_at'>;

/** The webhook URL (and revocation) of each key, by key id. */
export async function findWebhookTargets(trx: Transaction, apiKeyIds: readonly string[]): Promise<Map<string, WebhookTarget>> {
  if (apiKeyIds.length === 0) return new Map();
  const rows = await trx.selectFrom('api_keys').select(['id', 'webhook_url', 'revoked_at']).where('id', 'in', apiKeyIds).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

const DELIVERY_COLUMNS = [
  'id',
  'message_id',
  'workspace_id',
  'api_key_id',
  'url',
  'body',
  'status',
  'attempts',
  'attempts_at_redelivery',
  'next_attempt_at',
  'created_at',
  'updated_at',
] as const;

/** Outbox rows; one per message (message_id is unique): a second one for the same message is a no-op. */
export async function insertWebhookDeliveries(trx: Transaction, rows: readonly WebhookDeliveryRow[]): Promise<void> {
  await insertIgnoringConflicts(trx, 'webhook_deliveries', DELIVERY_COLUMNS, rows, 'message_id', 'id');
}
