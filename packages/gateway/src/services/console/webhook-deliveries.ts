/**
 * The signed-in workspace's delivery reports in the console: the operator's verbs
 * (services/webhook-deliveries.ts) confined to the caller's workspace, each delivery shown with the
 * headers it is sent with (its signature recomputed with the key's secret, exactly as the sender
 * signs it), and each redelivery written to the activity log.
 */
import { decryptSecret } from '../../lib/crypto.ts';
import { parseDateTime } from '../../lib/vietnam-time.ts';
import { deliveryReportHeaders } from '../../lib/webhook-signature.ts';
import { findApiKey } from '../../store/api-keys.ts';
import type { WebhookDeliveryRow } from '../../store/schema.ts';
import { findDeliveryOfMessage, listAttempts } from '../../store/webhook-deliveries.ts';
import { requireMasterKeyRing } from '../master-keys.ts';
import type { ConsoleUserCaller, Context, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import {
  getWebhookDelivery,
  listWebhookDeliveries,
  redeliverFailedWebhooks,
  redeliverWebhook,
  type DeliveryWithLog,
  type FailedRedelivery,
} from '../webhook-deliveries.ts';

/** A delivery with its attempt log and the headers every attempt carries (the attempt number aside). */
export interface DeliveryDetail extends DeliveryWithLog {
  headers: Record<string, string>;
}

export interface ConsoleDeliveryPage {
  deliveries: WebhookDeliveryRow[];
  hasMore: boolean;
}

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

/** One page of the workspace's reports, newest first; `from`/`to` bound their creation time. */
export async function listConsoleDeliveries({ ctx, input }: VerbCall<ConsoleUserCaller, { status?: string; from?: string; to?: string; limit?: number; offset?: number }>): Promise<ConsoleDeliveryPage> {
  const limit = input.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badRequest(`limit must be 1 to ${MAX_PAGE}`);
  // Checked here so the message names the console's parameters (the operator's are since and until).
  for (const [name, text] of [['from', input.from], ['to', input.to]] as const) {
    if (text !== undefined && parseDateTime(text) === null) throw new ApiError('invalid_date_range', `${name} must be an ISO 8601 date-time, got "${text}"`);
  }
  // One more than asked tells whether another page exists.
  const rows = await listWebhookDeliveries({ ctx, input: { status: input.status, since: input.from, until: input.to, limit: limit + 1, offset: input.offset ?? 0 } });
  return { deliveries: rows.slice(0, limit), hasMore: rows.length > limit };
}

async function withHeaders(ctx: Context<ConsoleUserCaller>, detail: DeliveryWithLog): Promise<DeliveryDetail> {
  const { delivery } = detail;
  const key = await findApiKey(ctx.store.db, delivery.api_key_id);
  // Keys are revoked, never deleted: a report's key is always there.
  if (!key) throw new Error(`the API key ${delivery.api_key_id} of delivery ${delivery.id} is missing`);
  const signingKey = decryptSecret(key.encrypted_key, requireMasterKeyRing(ctx));
  return { ...detail, headers: deliveryReportHeaders({ body: Buffer.from(delivery.body, 'utf8'), signingKey, deliveryId: delivery.id }) };
}

export async function getConsoleDelivery({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string }>): Promise<DeliveryDetail> {
  return withHeaders(ctx, await getWebhookDelivery({ ctx, input }));
}

/** The delivery reports sent for one message of the workspace (none, or one). */
export async function listMessageReports({ ctx, input }: VerbCall<ConsoleUserCaller, { messageId: string }>): Promise<DeliveryDetail[]> {
  const delivery = await findDeliveryOfMessage(ctx.store.db, ctx.caller.workspaceId, input.messageId);
  if (!delivery) return [];
  return [await withHeaders(ctx, { delivery, attempts: await listAttempts(ctx.store.db, delivery.id) })];
}

/** Sends one report again to its key's current URL (409 while pending or when the key cannot send); the shared verb writes the activity log. */
export async function redeliverConsoleDelivery({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string }>): Promise<DeliveryDetail> {
  return withHeaders(ctx, await redeliverWebhook({ ctx, input }));
}

/** Every report of the workspace that failed at or after `failed_since`, again. */
export async function redeliverConsoleFailures({ ctx, input }: VerbCall<ConsoleUserCaller, { failed_since: string }>): Promise<FailedRedelivery> {
  return redeliverFailedWebhooks({ ctx, input: { failed_since: input.failed_since } });
}
