/**
 * The platform's webhook events (README, Architecture, flow 3; docs/zns-platform.md).
 *
 * Every event is verified before anything else: X-ZEvent-Signature is "mac=" + the plain SHA-256
 * hex (not HMAC) of app_id + raw body bytes + the body's timestamp + the OA Secret Key of the
 * sender account named by the event. The reference is unsure whether the first term is the app_id
 * or the oa_id, so both are accepted (a documented tolerance), and the "mac=" prefix is optional.
 *
 * user_received_message with a delivery_time marks our message delivered (idempotent: only a
 * queued, sending or sent message can become delivered) and, in the same transaction, writes the
 * customer's delivery report to the webhook outbox. change_template_status syncs
 * the template's review status; change_oa_daily_quota drops the OA's cached platform quota. Every
 * other valid event is answered and ignored, so the platform stops retrying it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { runInTransaction } from '../store/database.ts';
import { recordPlatformEvent, setTemplateStatusFromPlatform } from '../store/platform-events.ts';
import { TEMPLATE_STATUSES, type SenderAccountRow, type TemplateStatus } from '../store/schema.ts';
import type { Context, PlatformCaller, VerbCall } from './context.ts';
import { ApiError, badRequest } from './errors.ts';

const DELIVERY_EVENT = 'user_received_message';
const TEMPLATE_STATUS_EVENT = 'change_template_status';
const OA_DAILY_QUOTA_EVENT = 'change_oa_daily_quota';

export type PlatformEventOutcome =
  /** The message became delivered (and its report was queued when its key has a webhook URL). */
  | 'delivered'
  /** A repeat of an earlier event of its group (same message, same platform msg_id), or a template status event applied before. */
  | 'duplicate'
  /** The message is failed or already delivered (as a retried event finds it): left as it is. */
  | 'not_deliverable'
  /** No message of ours matches the event. */
  | 'unknown_message'
  /** user_received_message without delivery_time: an OA chat receipt, not a ZNS delivery. */
  | 'chat_receipt'
  | 'template_status_changed'
  /** The OA's tier moved: its cached platform quota is dropped, so the next lookup asks again. */
  | 'quota_changed'
  | 'unknown_template'
  /** An event name we do not act on, or an event missing what we would act on. */
  | 'ignored';

type JsonObject = Record<string, unknown>;

function objectOf(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** All ids and times are strings on the wire; a number is read as its decimal text (tolerance). */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Epoch milliseconds written as a string of digits ("1602960467432"). */
function epochMsOf(value: unknown): number | null {
  const text = textOf(value)?.trim();
  if (!text || !/^\d{1,16}$/.test(text)) return null;
  const ms = Number(text);
  return Number.isSafeInteger(ms) ? ms : null;
}

/** The OA whose secret signs the event: oa_id (template events), oaId, or sender.id (delivery events). */
function eventOaId(event: JsonObject): string | undefined {
  return textOf(event.oa_id) || textOf(event.oaId) || textOf(objectOf(event.sender)?.id) || undefined;
}

const SHA256_HEX = /^(?:mac=)?([0-9a-f]{64})$/i;

/** sha256(first + rawBody + timestamp + secret), hashed part by part (no concatenated copy of the body). */
function eventDigest(first: string, rawBody: Buffer, timestamp: string, secret: string): Buffer {
  return createHash('sha256').update(first, 'utf8').update(rawBody).update(timestamp, 'utf8').update(secret, 'utf8').digest();
}

/**
 * Checks X-ZEvent-Signature: sha256_hex(first + rawBody + timestamp + secret) with first = the
 * event's app_id or, tolerated, the oa_id. Accepts the value with or without "mac=" and in either
 * hex case. A value that is not 64 hex digits cannot match (its shape is no secret); any other is
 * compared as 32 bytes in constant time with each candidate, the app_id's first. Stopping at a match
 * tells a caller only what the answer tells anyway; a wrong value is compared with every candidate.
 */
function verifyEventSignature(input: {
  presented: string;
  rawBody: Buffer;
  appId: string | undefined;
  oaId: string;
  timestamp: string;
  secret: string;
}): boolean {
  const hex = SHA256_HEX.exec(input.presented.trim())?.[1];
  if (hex === undefined) return false;
  const presented = Buffer.from(hex, 'hex');
  const { appId, oaId, rawBody, timestamp, secret } = input;
  if (appId !== undefined && appId !== '' && timingSafeEqual(eventDigest(appId, rawBody, timestamp, secret), presented)) return true;
  return oaId !== appId && oaId !== '' && timingSafeEqual(eventDigest(oaId, rawBody, timestamp, secret), presented);
}

export interface PlatformEventInput {
  /** The exact request bytes: the signature covers them. */
  rawBody: Buffer;
  /** The body parsed as JSON. */
  event: unknown;
  /** The X-ZEvent-Signature header, if any. */
  signature: string | undefined;
}

const unverifiable = (message: string): ApiError => new ApiError('invalid_event_signature', message);

/**
 * Verifies a platform event and applies it. Throws 400 for a body that is not a JSON object and
 * 401 when the signature is missing, wrong or cannot be checked (no such sender account, or one
 * without an OA secret key). Every verified event resolves, so the platform stops retrying it.
 */
export async function receivePlatformEvent({ ctx, input }: VerbCall<PlatformCaller, PlatformEventInput>): Promise<PlatformEventOutcome> {
  const { log } = ctx;
  const event = objectOf(input.event);
  if (!event) throw badRequest('the event body must be a JSON object');
  const oaId = eventOaId(event);
  if (!oaId) throw unverifiable('the event names no sender account (sender.id or oa_id), so its signature cannot be verified');
  const signer = await ctx.parts.eventSigners.signerOf(oaId);
  if (!signer) {
    log.info({ oa_id: oaId }, 'platform event for a sender account that is not connected');
    throw unverifiable(`sender account ${oaId} is not connected, so the event signature cannot be verified`);
  }
  const { account } = signer;
  if (signer.secret === null) {
    log.warn({ oa_id: oaId }, 'platform event for a sender account without an OA secret key: connect it again with oa_secret_key');
    throw unverifiable(`sender account ${oaId} has no OA secret key, so the event signature cannot be verified`);
  }
  if (input.signature === undefined || input.signature.trim() === '') throw unverifiable('missing X-ZEvent-Signature header');
  const valid = verifyEventSignature({
    presented: input.signature,
    rawBody: input.rawBody,
    appId: textOf(event.app_id),
    oaId,
    timestamp: textOf(event.timestamp) ?? '',
    secret: signer.secret,
  });
  if (!valid) {
    log.info({ oa_id: oaId }, 'platform event with a wrong signature');
    throw unverifiable('X-ZEvent-Signature does not match the event');
  }
  return applyPlatformEvent({ ctx, account, event });
}

/** A verified event from one sender account. */
interface VerifiedEvent {
  ctx: Context<PlatformCaller>;
  account: SenderAccountRow;
  event: JsonObject;
}

async function applyPlatformEvent(input: VerifiedEvent): Promise<PlatformEventOutcome> {
  const eventName = textOf(input.event.event_name) ?? '';
  if (eventName === DELIVERY_EVENT) return applyDelivery(input);
  if (eventName === TEMPLATE_STATUS_EVENT) return applyTemplateStatus(input);
  if (eventName === OA_DAILY_QUOTA_EVENT) {
    // Only this process's cache: other processes see the new tier within TMS_PLATFORM_QUOTA_CACHE_MS.
    input.ctx.parts.platformQuota.forget(input.account.oa_id);
    input.ctx.log.info({ oa_id: input.account.oa_id, quota: objectOf(input.event.quota) }, 'daily quota of a sender account changed');
    return 'quota_changed';
  }
  input.ctx.log.debug({ event_name: eventName, oa_id: input.account.oa_id }, 'platform event ignored');
  return 'ignored';
}

async function applyDelivery(input: VerifiedEvent): Promise<PlatformEventOutcome> {
  const { ctx, account } = input;
  const { log } = ctx;
  const message = objectOf(input.event.message);
  const deliveryTime = message?.delivery_time;
  if (deliveryTime === undefined || deliveryTime === null || deliveryTime === '') {
    log.debug({ oa_id: account.oa_id }, 'OA chat receipt (no delivery_time) ignored');
    return 'chat_receipt';
  }
  const platformMsgId = textOf(message?.msg_id);
  const deliveredAt = epochMsOf(deliveryTime);
  if (!platformMsgId || deliveredAt === null) {
    log.warn({ oa_id: account.oa_id, msg_id: platformMsgId, delivery_time: deliveryTime }, 'delivery event without a usable msg_id or delivery_time ignored');
    return 'ignored';
  }
  // Found, marked delivered and its report queued in one transaction, shared with the events that
  // arrive at the same time.
  const trackingId = textOf(message?.tracking_id) || null;
  const outcome = await ctx.parts.deliveryEventWriter.submit({
    message: { trackingId, workspaceId: account.workspace_id },
    platformMsgId,
    oaId: account.oa_id,
    deliveredAt,
    now: ctx.clock(),
  });
  if (outcome === 'unknown_message') {
    log.info({ oa_id: account.oa_id, msg_id: platformMsgId }, 'delivery event for a message that is not ours');
    return outcome;
  }
  if (outcome === 'delivered') ctx.parts.metrics.delivered.inc();
  log.debug({ oa_id: account.oa_id, msg_id: platformMsgId, tracking_id: trackingId, outcome }, 'delivery event applied');
  return outcome;
}

function isTemplateStatus(value: string): value is TemplateStatus {
  return (TEMPLATE_STATUSES as readonly string[]).includes(value);
}

async function applyTemplateStatus(input: VerifiedEvent): Promise<PlatformEventOutcome> {
  const { ctx, account, event } = input;
  const { log } = ctx;
  const templateId = textOf(event.template_id);
  const newStatus = textOf(objectOf(event.status)?.new_status)?.trim().toUpperCase();
  if (!templateId || !newStatus || !isTemplateStatus(newStatus)) {
    log.warn({ oa_id: account.oa_id, template_id: templateId, new_status: newStatus }, 'template status event without a known template_id or status ignored');
    return 'ignored';
  }
  const now = ctx.clock();
  const outcome = await runInTransaction(ctx.store, async (trx): Promise<PlatformEventOutcome> => {
    // A retried old event must not undo a newer change: each event is applied once.
    const fresh = await recordPlatformEvent(trx, {
      event_key: `${TEMPLATE_STATUS_EVENT}:${account.oa_id}:${templateId}:${textOf(event.timestamp) ?? ''}`,
      event_name: TEMPLATE_STATUS_EVENT,
      oa_id: account.oa_id,
      message_id: null,
      received_at: now,
    });
    if (!fresh) return 'duplicate';
    const changed = await setTemplateStatusFromPlatform(trx, { workspaceId: account.workspace_id, oaId: account.oa_id, templateId, status: newStatus, now });
    return changed ? 'template_status_changed' : 'unknown_template';
  });
  if (outcome === 'template_status_changed') ctx.parts.catalog.forgetTemplate(account.workspace_id, templateId);
  log.info({ oa_id: account.oa_id, template_id: templateId, new_status: newStatus, outcome }, 'template status event');
  return outcome;
}
