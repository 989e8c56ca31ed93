/**
 * Sending: POST /message/template (phone), /message/template/hashphone, /rsa/message/template and the
 * development-mode path, checked in the platform's order; an accepted send is stored and its delivery scheduled.
 *
 * Hot path (plain send): Map lookups, a few comparisons, one random-pool slice for msg_id, one heap push for
 * the delivery event. No logging, no crypto.
 */
import { znsError, type ZnsErrorBody } from '../errors.ts';
import { isJsonObject } from '../json-object.ts';
import { oaepDecrypt } from '../rsa.ts';
import type { OaState } from './accounts.ts';
import { deliverAfter, storeMessage, type MessageRecord } from './messages.ts';
import { authenticate } from './oauth.ts';
import { normalizePhone } from './phone.ts';
import { stateChanged, type Platform } from './platform-state.ts';
import { remainingQuota, rollQuotaDay } from './quota.ts';
import { recipientRuleFor } from './recipient-rules.ts';
import { checkTemplateData } from './template-data.ts';

export type SendKind = 'phone' | 'hash' | 'rsa';

/** What the server needs to log a send, beside the body it answers. */
export interface SendMeta {
  oa_id: string | null;
  tracking_id: string | null;
  accepted: boolean;
  code: number;
}

export interface SendResult {
  body: object;
  meta: SendMeta;
}

const HASH_PHONE = /^[0-9a-fA-F]{64}$/;
const TRACKING_ID_MAX_LENGTH = 48;
/** Tags that may not go beyond the quota with sending_mode 3. */
const QUOTA_BOUND_TAGS = new Set(['TRANSACTION', 'CUSTOMER_CARE', 'OTP', 'IN_TRANSACTION']);

/** The send's tracking_id as text (a number is taken too), or null when it has none usable. */
export function trackingIdOf(body: unknown): string | null {
  const trackingId = isJsonObject(body) ? body.tracking_id : undefined;
  return typeof trackingId === 'string' ? trackingId : typeof trackingId === 'number' ? String(trackingId) : null;
}

function reject(platform: Platform, error: ZnsErrorBody, oa: OaState | null, trackingId: string | null): SendResult {
  const counters = platform.counters;
  counters.sendsRejected++;
  const code = String(error.error);
  counters.rejectedByError[code] = (counters.rejectedByError[code] ?? 0) + 1;
  return { body: error, meta: { oa_id: oa ? oa.oa_id : null, tracking_id: trackingId, accepted: false, code: error.error } };
}

/** A refusal with one of the catalogue's codes, by an authenticated OA. (A plain function: a closure per send costs.) */
function refused(platform: Platform, oa: OaState, trackingId: string | null, code: number): SendResult {
  return reject(platform, znsError(code), oa, trackingId);
}

/** Counts the accepted tracking id for the duplicate counters, remembering at most message_retention of them. */
function countTrackingId(platform: Platform, trackingId: string): void {
  const counts = platform.trackingIdCounts;
  const count = (counts.get(trackingId) ?? 0) + 1;
  counts.set(trackingId, count);
  if (count === 1 && counts.size > platform.settings.message_retention) {
    const oldest = counts.keys().next();
    if (!oldest.done) counts.delete(oldest.value);
  }
  if (count === 2) platform.counters.duplicateTrackingIds++;
  if (count >= 2) platform.counters.duplicateAccepts++;
}

/** One send (normal / hashphone / RSA / development mode). */
export function send(platform: Platform, kind: SendKind, token: string | undefined, proof: string | undefined, body: unknown, forceDevelopment = false): SendResult {
  platform.counters.sendsReceived++;
  const tracking = trackingIdOf(body);
  const authenticated = authenticate(platform, token, proof);
  if (!('oa_id' in authenticated)) return reject(platform, authenticated, null, tracking);
  const oa = authenticated;
  if (!isJsonObject(body)) return refused(platform, oa, tracking, -122);
  const phoneFormat = platform.settings.phone_format;

  // recipient
  let phone: string | null = null;
  let hash = '';
  if (kind === 'phone') {
    phone = normalizePhone(body.phone, phoneFormat);
    if (phone === null) return refused(platform, oa, tracking, -108);
  } else if (kind === 'hash') {
    const hashPhone = body.hash_phone;
    if (typeof hashPhone !== 'string' || !HASH_PHONE.test(hashPhone)) return refused(platform, oa, tracking, -108);
    hash = hashPhone.toLowerCase();
  } else {
    if (!oa.rsaKey) return refused(platform, oa, tracking, -128);
    const ciphertext = body.rsa_phone;
    if (typeof ciphertext !== 'string') return refused(platform, oa, tracking, -108);
    const plain = oaepDecrypt(oa.rsaKey, ciphertext);
    if (!plain) return refused(platform, oa, tracking, -123);
    phone = normalizePhone(plain.toString('utf8'), phoneFormat);
    if (phone === null) return refused(platform, oa, tracking, -108);
  }

  // template
  const templateId = body.template_id;
  const template = typeof templateId === 'string' || typeof templateId === 'number' ? platform.templates.get(String(templateId)) : undefined;
  if (!template) return refused(platform, oa, tracking, -109);
  if (template.oa !== oa) return refused(platform, oa, tracking, -117);
  if (template.status !== 'ENABLE') return refused(platform, oa, tracking, template.status === 'DISABLE' && template.quality === 'LOW' ? -146 : -131);

  // mode and sending_mode
  const mode = body.mode;
  if (mode !== undefined && mode !== 'development' && mode !== 'production') return refused(platform, oa, tracking, -132);
  const development = forceDevelopment || mode === 'development';
  let sendingMode = '1';
  const requestedSendingMode = body.sending_mode;
  if (requestedSendingMode !== undefined && requestedSendingMode !== null) {
    sendingMode = String(requestedSendingMode);
    if (sendingMode !== '1' && sendingMode !== '3') return refused(platform, oa, tracking, -161);
    if (sendingMode === '3') {
      if (!oa.allowSendingMode3) return refused(platform, oa, tracking, -120);
      if (QUOTA_BOUND_TAGS.has(template.template_tag)) return refused(platform, oa, tracking, -162);
    }
  }
  if (development && !(phone !== null ? oa.devAdmins.has(phone) : oa.devAdminHashes.has(hash))) return refused(platform, oa, tracking, -127);

  // params, tracking id
  const paramError = checkTemplateData(template, body.template_data, kind === 'rsa' ? oa.rsaKey : null, platform.settings.rsa_template_data);
  if (paramError !== 0) return refused(platform, oa, tracking, paramError);
  if (body.tracking_id !== undefined && body.tracking_id !== null && (tracking === null || tracking.length > TRACKING_ID_MAX_LENGTH)) return refused(platform, oa, tracking, -153);

  // recipient rules
  const rule = platform.recipientRules.length > 0 ? recipientRuleFor(platform.recipientRules, phone, hash) : null;
  if (rule !== null && rule.outcome === 'error') return refused(platform, oa, tracking, rule.error);

  // quota (development sends do not count; sending_mode 3 goes beyond it)
  const now = platform.now();
  if (!development) {
    rollQuotaDay(oa, now);
    if (sendingMode !== '3' && oa.usedToday >= oa.daily_quota) return refused(platform, oa, tracking, -144);
    oa.usedToday++;
  }

  // accepted
  const message: MessageRecord = {
    id: platform.messageIds.next(),
    oa,
    recipient: phone !== null && kind !== 'hash' ? phone : hash,
    phone,
    trackingId: tracking ?? '',
    sentTime: now,
    deliveryTime: 0,
    neverDelivered: rule !== null && rule.outcome === 'never',
  };
  storeMessage(platform, message);
  if (platform.storeSend) {
    try {
      platform.storeSend(message);
    } catch (err) {
      // Not stored, so not accepted: as if the request never came (the client gets an HTTP 500).
      platform.messages.delete(message.id);
      if (!development) oa.usedToday--;
      throw err;
    }
  }
  stateChanged(platform, false);
  if (!message.neverDelivered) deliverAfter(platform, message, rule !== null && rule.deliveryDelayMs !== null ? rule.deliveryDelayMs : platform.settings.events.delay_ms);
  platform.counters.sendsAccepted++;
  if (tracking !== null && tracking !== '') countTrackingId(platform, tracking);

  const sentTime = String(now);
  const data =
    development || kind === 'rsa'
      ? { msg_id: message.id, sent_time: sentTime }
      : { msg_id: message.id, sent_time: sentTime, sending_mode: sendingMode, quota: { dailyQuota: oa.dailyQuotaText, remainingQuota: String(remainingQuota(oa)) } };
  return { body: { error: 0, message: 'Success', data }, meta: { oa_id: oa.oa_id, tracking_id: tracking, accepted: true, code: 0 } };
}
