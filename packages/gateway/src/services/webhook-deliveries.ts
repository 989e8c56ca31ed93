/**
 * Operator verbs on delivery-report webhooks, shared by /admin/v1 and `tms admin webhooks`: list
 * and read deliveries with their attempt log, redeliver one, redeliver every failure since a time.
 * Also what a key change does to its deliveries still pending, and the retention purge.
 */
import { formatUtc, formatUtcOrNull, parseDateTime } from '../lib/vietnam-time.ts';
import { findApiKey } from '../store/api-keys.ts';
import { WEBHOOK_DELIVERY_STATUSES, type ApiKeyRow, type WebhookAttemptRow, type WebhookDeliveryRow, type WebhookDeliveryStatus } from '../store/schema.ts';
import {
  cancelPendingDeliveries,
  findDelivery,
  listAttempts,
  listDeliveries,
  purgeFinishedDeliveries,
  readdressPendingDeliveries,
  redeliverDelivery as redeliverRow,
  redeliverFailedSince,
} from '../store/webhook-deliveries.ts';
import type { Dependencies } from './context.ts';
import { ApiError, badRequest } from './errors.ts';
import { REMOVED_URL_REASON, REVOKED_KEY_REASON } from './webhook-sender.ts';

export function presentDelivery(row: WebhookDeliveryRow) {
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

export function presentAttempt(row: WebhookAttemptRow) {
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

/** A date-time given by the operator (ISO 8601; without an offset it is Vietnam time, as everywhere). */
function timeOf(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const time = parseDateTime(text);
  if (time === null) throw new ApiError('invalid_date_range', `${name} must be an ISO 8601 date-time, got "${text}"`);
  return time;
}

function isDeliveryStatus(value: string): value is WebhookDeliveryStatus {
  return (WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(value);
}

export interface ListDeliveriesInput {
  workspace_id?: string;
  status?: string;
  /** Created at or after. */
  since?: string;
  /** Created before. */
  until?: string;
  limit?: number;
  offset?: number;
}

export async function listWebhookDeliveries(deps: Dependencies, input: ListDeliveriesInput) {
  if (input.status !== undefined && !isDeliveryStatus(input.status)) throw badRequest(`status must be one of ${WEBHOOK_DELIVERY_STATUSES.join(', ')}`);
  const limit = input.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be 1 to 500');
  const rows = await listDeliveries(deps.store.db, {
    workspaceId: input.workspace_id,
    status: input.status,
    since: timeOf(input.since, 'since'),
    until: timeOf(input.until, 'until'),
    limit,
    offset: input.offset ?? 0,
  });
  return { deliveries: rows.map(presentDelivery), count: rows.length };
}

async function requireDelivery(deps: Dependencies, id: string): Promise<WebhookDeliveryRow> {
  const row = await findDelivery(deps.store.db, id);
  if (!row) throw new ApiError('webhook_delivery_not_found', `webhook delivery ${id} not found`);
  return row;
}

/** One delivery with the exact body it sends and its attempt log. */
export async function getWebhookDelivery(deps: Dependencies, id: string) {
  return presentDeliveryWithLog(deps, await requireDelivery(deps, id));
}

async function presentDeliveryWithLog(deps: Dependencies, row: WebhookDeliveryRow) {
  const attempts = await listAttempts(deps.store.db, row.id);
  return { ...presentDelivery(row), body: row.body, attempt_log: attempts.map(presentAttempt) };
}

/** Why a key's deliveries cannot be sent now, or null. */
function keyProblem(key: Pick<ApiKeyRow, 'revoked_at' | 'webhook_url'> | undefined): string | null {
  if (!key || key.revoked_at !== null) return 'its API key is revoked';
  if (!key.webhook_url) return 'its API key has no webhook URL (set one with keys set-webhook)';
  return null;
}

/**
 * Sends one delivery again, whatever became of it (failed, cancelled, even delivered), to its
 * key's current URL, with the full retry ladder. 409 while it is pending or when its key cannot
 * send; the delivery id and body stay the same.
 */
export async function redeliverWebhook(deps: Dependencies, id: string) {
  const row = await requireDelivery(deps, id);
  if (row.status === 'pending') throw new ApiError('webhook_delivery_pending', `webhook delivery ${id} is pending already`);
  const key = await findApiKey(deps.store.db, row.api_key_id);
  const problem = keyProblem(key);
  if (problem) throw new ApiError('webhook_delivery_not_redeliverable', `webhook delivery ${id} cannot be redelivered: ${problem}`);
  const redelivered = await redeliverRow(deps.store.db, { id, url: key!.webhook_url!, now: deps.clock() });
  if (!redelivered) throw new ApiError('webhook_delivery_pending', `webhook delivery ${id} is pending already`);
  // The row as redelivered, not read again: a worker may already be attempting it.
  return presentDeliveryWithLog(deps, redelivered);
}

/** Every delivery that failed at or after `failed_since` (optionally one workspace's) again. */
export async function redeliverFailedWebhooks(deps: Dependencies, input: { failed_since: string; workspace_id?: string }) {
  const since = timeOf(input.failed_since, 'failed_since');
  if (since === undefined) throw badRequest('failed_since is required');
  const result = await redeliverFailedSince(deps.store, { since, workspaceId: input.workspace_id, now: deps.clock() });
  return { redelivered: result.redelivered, skipped: result.skipped, failed_since: formatUtc(since) };
}

/**
 * After a key change: revoking it or removing its URL cancels its pending deliveries (a revoked
 * key's webhooks stop); a new URL readdresses them. Failed ones wait for a redelivery.
 */
export async function applyKeyChangeToDeliveries(deps: Dependencies, before: ApiKeyRow, after: ApiKeyRow): Promise<void> {
  const now = deps.clock();
  if (after.revoked_at !== null && before.revoked_at === null) {
    await cancelPendingDeliveries(deps.store.db, { apiKeyId: after.id, reason: REVOKED_KEY_REASON, now });
  } else if (after.webhook_url === null && before.webhook_url !== null) {
    await cancelPendingDeliveries(deps.store.db, { apiKeyId: after.id, reason: REMOVED_URL_REASON, now });
  } else if (after.webhook_url !== null && after.webhook_url !== before.webhook_url) {
    await readdressPendingDeliveries(deps.store.db, { apiKeyId: after.id, url: after.webhook_url, now });
  }
}


const PURGE_BATCH = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Retention: finished reports (delivered, failed, cancelled) and their attempt logs older than
 * TMS_WEBHOOK_RETENTION_DAYS are deleted, in batches so no transaction holds the store long.
 * Pending reports are kept however old. Returns how many went.
 */
export async function purgeFinishedWebhookDeliveries(deps: Pick<Dependencies, 'store' | 'clock' | 'config'>): Promise<number> {
  const before = deps.clock() - deps.config.webhooks.retentionDays * DAY_MS;
  let purged = 0;
  for (;;) {
    const deleted = await purgeFinishedDeliveries(deps.store, { before, limit: PURGE_BATCH });
    purged += deleted;
    if (deleted < PURGE_BATCH) return purged;
  }
}
