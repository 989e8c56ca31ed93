import type { Static } from 'typebox';
import { formatUtc, formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { DeliveryWithLog, FailedRedelivery } from '../../services/webhook-deliveries.ts';
import type { WebhookAttemptRow, WebhookDeliveryRow } from '../../services/vocabulary.ts';
import type { WebhookAttemptSchema, WebhookDeliveryDetailSchema, WebhookDeliverySchema } from '../routes/admin/admin-schemas.ts';

export function presentDelivery(row: WebhookDeliveryRow): Static<typeof WebhookDeliverySchema> {
  return {
    id: row.id,
    message_id: row.message_id,
    workspace_id: row.workspace_id,
    api_key_id: row.api_key_id,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? formatUtc(row.next_attempt_at) : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    delivered_at: formatUtcOrNull(row.delivered_at),
    failed_at: formatUtcOrNull(row.failed_at),
    created_at: formatUtc(row.created_at),
    updated_at: formatUtc(row.updated_at),
  };
}

export function presentAttempt(row: WebhookAttemptRow): Static<typeof WebhookAttemptSchema> {
  return {
    attempt: row.attempt,
    started_at: formatUtc(row.started_at),
    url: row.url,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    error: row.error,
    outcome: row.outcome,
  };
}

export function presentDeliveryList(rows: readonly WebhookDeliveryRow[]) {
  return { deliveries: rows.map(presentDelivery), count: rows.length };
}

/** One delivery with the exact body it sends and its attempt log. */
export function presentDeliveryWithLog({ delivery, attempts }: DeliveryWithLog): Static<typeof WebhookDeliveryDetailSchema> {
  return { ...presentDelivery(delivery), body: delivery.body, attempt_log: attempts.map(presentAttempt) };
}

export function presentFailedRedelivery(result: FailedRedelivery) {
  return { redelivered: result.redelivered, skipped: result.skipped, failed_since: formatUtc(result.failedSince) };
}
