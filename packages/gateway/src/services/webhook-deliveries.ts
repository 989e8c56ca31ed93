/**
 * Verbs on delivery-report webhooks, shared by /admin/v1, `tms admin webhooks` and the console: list
 * and read deliveries with their attempt log, redeliver one, redeliver every failure since a time.
 * The operator sees every workspace's; a console user only their own workspace's.
 * Also what a key change does to its deliveries still pending, and the retention purge.
 */
import { parseDateTime } from '../lib/vietnam-time.ts';
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
  REMOVED_URL_REASON,
  REVOKED_KEY_REASON,
} from '../store/webhook-deliveries.ts';
import { recordAudit } from './audit.ts';
import type { ConsoleUserCaller, Context, OperatorCaller, TaskCaller, VerbCall } from './context.ts';
import { ApiError, badRequest } from './errors.ts';

/** A date-time given by the operator (ISO 8601; without an offset it is Vietnam time, as everywhere). */
function timeOf(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const time = parseDateTime(text);
  if (time === null) throw new ApiError('invalid_date_range', `${name} must be an ISO 8601 date-time, got "${text}"`);
  return time;
}

/** Who reads and redelivers reports: the operator, or a console user within their workspace. */
export type DeliveryManager = OperatorCaller | ConsoleUserCaller;

/** The workspace a caller is confined to (undefined: the operator, every workspace) or asked for. */
function workspaceScope(ctx: Context<DeliveryManager>, asked: string | undefined): string | undefined {
  return ctx.caller.kind === 'console_user' ? ctx.caller.workspaceId : asked;
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

/** One page of deliveries, newest first. */
export async function listWebhookDeliveries({ ctx, input }: VerbCall<DeliveryManager, ListDeliveriesInput>): Promise<WebhookDeliveryRow[]> {
  if (input.status !== undefined && !isDeliveryStatus(input.status)) throw badRequest(`status must be one of ${WEBHOOK_DELIVERY_STATUSES.join(', ')}`);
  const limit = input.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be 1 to 500');
  return listDeliveries(ctx.store.db, {
    workspaceId: workspaceScope(ctx, input.workspace_id),
    status: input.status,
    since: timeOf(input.since, 'since'),
    until: timeOf(input.until, 'until'),
    limit,
    offset: input.offset ?? 0,
  });
}

async function requireDelivery(ctx: Context<DeliveryManager>, id: string): Promise<WebhookDeliveryRow> {
  const row = await findDelivery(ctx.store.db, id);
  const scope = workspaceScope(ctx, undefined);
  // Another workspace's delivery answers exactly like one that does not exist.
  if (!row || (scope !== undefined && row.workspace_id !== scope)) throw new ApiError('webhook_delivery_not_found', `webhook delivery ${id} not found`);
  return row;
}

/** A delivery with its attempt log, oldest attempt first. */
export interface DeliveryWithLog {
  delivery: WebhookDeliveryRow;
  attempts: WebhookAttemptRow[];
}

async function withLog(ctx: Context, delivery: WebhookDeliveryRow): Promise<DeliveryWithLog> {
  return { delivery, attempts: await listAttempts(ctx.store.db, delivery.id) };
}

/** One delivery with the exact body it sends and its attempt log. */
export async function getWebhookDelivery({ ctx, input }: VerbCall<DeliveryManager, { id: string }>): Promise<DeliveryWithLog> {
  return withLog(ctx, await requireDelivery(ctx, input.id));
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
export async function redeliverWebhook({ ctx, input }: VerbCall<DeliveryManager, { id: string }>): Promise<DeliveryWithLog> {
  const { id } = input;
  const row = await requireDelivery(ctx, id);
  if (row.status === 'pending') throw new ApiError('webhook_delivery_pending', `webhook delivery ${id} is pending already`);
  const key = await findApiKey(ctx.store.db, row.api_key_id);
  const problem = keyProblem(key);
  if (problem) throw new ApiError('webhook_delivery_not_redeliverable', `webhook delivery ${id} cannot be redelivered: ${problem}`);
  const redelivered = await redeliverRow(ctx.store.db, { id, url: key!.webhook_url!, now: ctx.clock() });
  if (!redelivered) throw new ApiError('webhook_delivery_pending', `webhook delivery ${id} is pending already`);
  await recordAudit(ctx, {
    action: 'webhook_delivery.redeliver',
    workspaceId: row.workspace_id,
    target: id,
    before: { status: row.status, url: row.url },
    after: { status: redelivered.status, url: redelivered.url },
  });
  // The row as redelivered, not read again: a worker may already be attempting it.
  return withLog(ctx, redelivered);
}

/** What a redelivery of failures did: how many are pending again, how many were left failed, since when. */
export interface FailedRedelivery {
  redelivered: number;
  /** Failed deliveries whose key is revoked or has no webhook URL. */
  skipped: number;
  failedSince: number;
}

/** Every delivery that failed at or after `failed_since` (optionally one workspace's) again. */
export async function redeliverFailedWebhooks({ ctx, input }: VerbCall<DeliveryManager, { failed_since: string; workspace_id?: string }>): Promise<FailedRedelivery> {
  const since = timeOf(input.failed_since, 'failed_since');
  if (since === undefined) throw badRequest('failed_since is required');
  const workspaceId = workspaceScope(ctx, input.workspace_id);
  const result = await redeliverFailedSince(ctx.store, { since, workspaceId, now: ctx.clock() });
  await recordAudit(ctx, {
    action: 'webhook_delivery.redeliver_failed',
    workspaceId: workspaceId ?? null,
    target: null,
    before: null,
    after: { failed_since: new Date(since).toISOString(), redelivered: result.redelivered, skipped: result.skipped },
  });
  return { redelivered: result.redelivered, skipped: result.skipped, failedSince: since };
}

/**
 * After a key change: revoking it or removing its URL cancels its pending deliveries (a revoked
 * key's webhooks stop); a new URL readdresses them. Failed ones wait for a redelivery.
 */
export async function applyKeyChangeToDeliveries({ ctx, input }: VerbCall<DeliveryManager, { before: ApiKeyRow; after: ApiKeyRow }>): Promise<void> {
  const { before, after } = input;
  const now = ctx.clock();
  const key = { workspaceId: after.workspace_id, apiKeyId: after.id };
  if (after.revoked_at !== null && before.revoked_at === null) {
    await cancelPendingDeliveries(ctx.store.db, { ...key, reason: REVOKED_KEY_REASON, now });
  } else if (after.webhook_url === null && before.webhook_url !== null) {
    await cancelPendingDeliveries(ctx.store.db, { ...key, reason: REMOVED_URL_REASON, now });
  } else if (after.webhook_url !== null && after.webhook_url !== before.webhook_url) {
    await readdressPendingDeliveries(ctx.store.db, { ...key, url: after.webhook_url, now });
  }
}

const PURGE_BATCH = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Retention: finished reports (delivered, failed, cancelled) and their attempt logs older than
 * TMS_WEBHOOK_RETENTION_DAYS are deleted, in batches so no transaction holds the store long.
 * Pending reports are kept however old. Returns how many went.
 */
export async function purgeFinishedWebhookDeliveries({ ctx }: VerbCall<TaskCaller, Record<string, never>>): Promise<number> {
  const before = ctx.clock() - ctx.parts.config.webhooks.retentionDays * DAY_MS;
  let purged = 0;
  for (;;) {
    const deleted = await purgeFinishedDeliveries(ctx.store, { before, limit: PURGE_BATCH });
    purged += deleted;
    if (deleted < PURGE_BATCH) return purged;
  }
}
