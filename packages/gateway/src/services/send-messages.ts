import { createSortableId } from '../lib/ids.ts';
import { carrierOf, normalizePhone } from '../lib/phone.ts';
import { parseDateTime, vietnamDay } from '../lib/vietnam-time.ts';
import type { AcceptanceOutcome, AcceptanceRequest, AcceptedResult, Candidate, QuotaRule } from '../store/acceptances.ts';
import type { MessageRow, SendMode, SenderAccountRow, TemplateRow } from '../store/schema.ts';
import { dailyQuotaOn } from '../caches/platform-quota.ts';
import type { Context, VerbCall, WorkspaceCaller } from './context.ts';
import { findApiKey } from '../store/api-keys.ts';
import { ApiError, recipientError } from './errors.ts';
import { IDEMPOTENCY_CONFLICT, runIdempotently, type IdempotencyClaim, type Idempotent, type IdempotentOutcome } from './idempotency.ts';
import { findTemplateDataProblem, parseTemplateParams, type TemplateParam } from './template-data.ts';

const MAX_SCHEDULE_AHEAD_MS = 60 * 24 * 60 * 60 * 1000;

export type { AcceptedResult, RecipientResult } from '../store/acceptances.ts';

type ApiContext = Context<WorkspaceCaller>;

/**
 * For console sends only (the public API has no such field): the API key whose webhook gets the
 * messages' delivery reports. Without it a console send gets no report.
 */
interface ReportKeyChoice {
  api_key_id?: string;
}

export interface SendInput extends Idempotent, ReportKeyChoice {
  template_id: string;
  phone: string;
  template_data?: Record<string, string>;
  tracking_id?: string;
  send_at?: string;
  mode?: 'plain' | 'hashphone';
}

export interface BatchInput extends Idempotent, ReportKeyChoice {
  template_id: string;
  recipients: { phone?: string; template_data?: Record<string, string>; tracking_id?: string }[];
  send_at?: string;
  mode?: 'plain' | 'hashphone';
}

export interface RsaInput extends Idempotent {
  template_id: string;
  recipients: { rsa_phone?: string; template_data?: Record<string, string>; tracking_id?: string }[];
  send_at?: string;
}

interface Schedule {
  dueAt: number;
  scheduledAt: number | null;
}

/** Who the messages are recorded as sent by: the key whose webhook gets their reports, and the source. */
interface Sender {
  apiKeyId: string;
  source: MessageRow['source'];
}

interface SendTarget {
  sender: Sender;
  template: TemplateRow;
  params: TemplateParam[];
  account: SenderAccountRow;
  schedule: Schedule;
  now: number;
}

/** send_at per docs/api.md: ISO 8601, Vietnam time without an offset, at most 60 days ahead, past = now. */
function resolveSchedule(sendAt: string | undefined, now: number): Schedule {
  if (sendAt === undefined) return { dueAt: now, scheduledAt: null };
  const at = parseDateTime(sendAt);
  if (at === null) throw new ApiError('invalid_send_at', `send_at "${sendAt}" is not an ISO 8601 date-time`);
  if (at > now + MAX_SCHEDULE_AHEAD_MS) throw new ApiError('invalid_send_at', 'send_at is more than 60 days in the future');
  return at <= now ? { dueAt: now, scheduledAt: null } : { dueAt: at, scheduledAt: at };
}

/**
 * An API key sends as itself. A console user sends as the key it names (its webhook gets the
 * reports), or as itself with no report: a console message's api_key_id is then the user's id.
 */
async function resolveSender(ctx: ApiContext, reportKeyId: string | undefined): Promise<Sender> {
  const { caller } = ctx;
  if (caller.kind === 'api_key') return { apiKeyId: caller.apiKeyId, source: 'api' };
  if (reportKeyId === undefined) return { apiKeyId: caller.userId, source: 'console' };
  const key = await findApiKey(ctx.store.db, reportKeyId);
  if (!key || key.workspace_id !== caller.workspaceId || key.revoked_at !== null) throw new ApiError('api_key_not_found', `API key ${reportKeyId} not found`);
  return { apiKeyId: key.id, source: 'console' };
}

async function resolveTarget(ctx: ApiContext, templateId: string, sendAt: string | undefined, reportKeyId?: string): Promise<SendTarget> {
  const { catalog } = ctx.parts;
  const template = await catalog.template(ctx.caller.workspaceId, templateId);
  if (!template) throw new ApiError('template_not_found', `template ${templateId} not found`);
  if (template.status !== 'ENABLE') throw new ApiError('template_not_enabled', `template ${templateId} is ${template.status}; only ENABLE templates can be sent`);
  const account = await catalog.senderAccount(ctx.caller.workspaceId, template.oa_id);
  if (!account || account.status === 'disconnected') throw new ApiError('sender_account_not_connected', `sender account ${template.oa_id} of template ${templateId} is not connected`);
  const sender = await resolveSender(ctx, reportKeyId);
  const now = ctx.clock();
  return { sender, template, params: parseTemplateParams(template.params), account, schedule: resolveSchedule(sendAt, now), now };
}

function buildMessage(
  ctx: ApiContext,
  target: SendTarget,
  recipient: { phone: string | null; rsaPhone: string | null; trackingId: string | undefined; templateData: Record<string, string> },
  mode: SendMode,
): MessageRow {
  const id = createSortableId('msg', target.now);
  return {
    id,
    workspace_id: ctx.caller.workspaceId,
    api_key_id: target.sender.apiKeyId,
    tracking_id: recipient.trackingId ?? id,
    status: 'queued',
    mode,
    phone: recipient.phone,
    carrier: recipient.phone === null ? null : carrierOf(recipient.phone),
    rsa_phone: recipient.rsaPhone,
    source: target.sender.source,
    template_id: target.template.template_id,
    oa_id: target.template.oa_id,
    template_data: JSON.stringify(recipient.templateData),
    price: target.template.price,
    quota_day: null,
    provider_msg_id: null,
    error_code: null,
    error_message: null,
    error_reason: null,
    due_at: target.schedule.dueAt,
    scheduled_at: target.schedule.scheduledAt,
    attempts: 0,
    lease_expires_at: null,
    unconfirmed_since: null,
    sent_at: null,
    status_checked_at: null,
    delivered_at: null,
    failed_at: null,
    created_at: target.now,
    updated_at: target.now,
  };
}

function rejectionError(outcome: AcceptanceOutcome): ApiError {
  if (outcome.kind === 'insufficient_balance') {
    return new ApiError('insufficient_balance', `insufficient wallet balance: ${outcome.required} VND needed, ${outcome.balance} VND available`);
  }
  if (outcome.kind === 'message_cap_reached') {
    return new ApiError('account_cap_reached', `account message cap reached: ${outcome.used} of ${outcome.cap} messages used, ${outcome.requested} more requested`);
  }
  return new ApiError('internal_error', 'unexpected acceptance outcome');
}

async function accept(ctx: ApiContext, path: 'send' | 'batch' | 'rsa', request: AcceptanceRequest): Promise<AcceptedResult | typeof IDEMPOTENCY_CONFLICT> {
  const outcome = await ctx.parts.acceptanceWriter.submit(request);
  if (outcome.kind === 'accepted') {
    ctx.parts.metrics.accepted.inc({ path }, outcome.result.acceptedCount);
    return outcome.result;
  }
  if (outcome.kind === 'idempotency_conflict') return IDEMPOTENCY_CONFLICT;
  throw rejectionError(outcome);
}

/** POST /messages/send: one message, charged and queued in one transaction. */
export async function sendMessage({ ctx, input: body }: VerbCall<WorkspaceCaller, SendInput>): Promise<IdempotentOutcome<AcceptedResult>> {
  return runIdempotently(ctx, body.idempotency, async (claim: IdempotencyClaim | null) => {
    const phone = normalizePhone(body.phone);
    if (phone === '') throw new ApiError('missing_phone', 'phone must contain a number');
    const target = await resolveTarget(ctx, body.template_id, body.send_at, body.api_key_id);
    const templateData = body.template_data ?? {};
    const problem = findTemplateDataProblem(target.params, templateData);
    if (problem) throw new ApiError('invalid_template_data', `template_data: ${problem}`);
    const day = vietnamDay(target.schedule.dueAt);
    const fields = { phone, rsaPhone: null, trackingId: body.tracking_id, templateData };
    const message = { ...buildMessage(ctx, target, fields, body.mode ?? target.account.default_mode), quota_day: day };
    return accept(ctx, 'send', {
      workspaceId: ctx.caller.workspaceId,
      recipients: [{ echo: {}, message }],
      scheduledAt: target.schedule.scheduledAt,
      // A single send counts against the daily quota but is not refused by it (docs/api.md).
      quota: { oaId: target.account.oa_id, day, dailyQuota: target.account.daily_quota, enforce: false },
      idempotency: claim,
    });
  });
}

function echoOf(phone: string | undefined, trackingId: string | undefined): Candidate['echo'] {
  const echo: Candidate['echo'] = {};
  if (phone !== undefined) echo.phone = phone;
  if (trackingId !== undefined) echo.trackingId = trackingId;
  return echo;
}

/** Shared by batch and RSA: quota-limited acceptance of valid recipients, results in request order. */
async function acceptRecipients(
  ctx: ApiContext,
  path: 'batch' | 'rsa',
  target: SendTarget,
  recipients: Candidate[],
  claim: IdempotencyClaim | null,
): Promise<AcceptedResult | typeof IDEMPOTENCY_CONFLICT> {
  const day = vietnamDay(target.schedule.dueAt);
  for (const recipient of recipients) if ('message' in recipient) recipient.message.quota_day = day;
  // The platform's figures come from a per-process cache (caches/platform-quota.ts); without them the
  // configured daily_quota applies, so a platform outage never refuses a batch by itself. The store
  // grants `allowance - reserved(day)`, reading reserved under the quota row lock: usedElsewhere
  // (platform use not explained by our sent messages) does not move as we send, so this stays
  // exact for concurrent groups and does not count our own sent messages twice.
  const quota = dailyQuotaOn(await ctx.parts.platformQuota.lookup(target.account.oa_id), target.account.daily_quota, day);
  const rule: QuotaRule = {
    oaId: target.account.oa_id,
    day,
    dailyQuota: Math.max(0, quota.dailyQuota - quota.usedElsewhere),
    enforce: true,
    overQuotaRefusal: recipientError('daily_quota_exceeded', `sender account ${target.account.oa_id} has no daily quota left for ${day} (daily quota ${quota.dailyQuota})`),
  };
  return accept(ctx, path, { workspaceId: ctx.caller.workspaceId, recipients, scheduledAt: target.schedule.scheduledAt, quota: rule, idempotency: claim });
}

function templateDataError(target: SendTarget, data: Record<string, string>): string | null {
  const problem = findTemplateDataProblem(target.params, data);
  return problem ? recipientError('invalid_template_data', problem) : null;
}

/** POST /messages/batch: up to 500 recipients of one template; the wallet covers all or none. */
export async function sendBatch({ ctx, input: body }: VerbCall<WorkspaceCaller, BatchInput>): Promise<IdempotentOutcome<AcceptedResult>> {
  return runIdempotently(ctx, body.idempotency, async (claim) => {
    const target = await resolveTarget(ctx, body.template_id, body.send_at, body.api_key_id);
    const mode = body.mode ?? target.account.default_mode;
    const recipients = body.recipients.map((recipient): Candidate => {
      const phone = normalizePhone(recipient.phone ?? '');
      const templateData = recipient.template_data ?? {};
      const echo = echoOf(phone, recipient.tracking_id);
      const refusal = phone === '' ? recipientError('missing_phone', 'recipient has no phone number') : templateDataError(target, templateData);
      if (refusal) return { echo, refusal };
      return { echo, message: buildMessage(ctx, target, { phone, rsaPhone: null, trackingId: recipient.tracking_id, templateData }, mode) };
    });
    return acceptRecipients(ctx, 'batch', target, recipients, claim);
  });
}

const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** RSA ciphertexts are as long as the key's modulus: 1024 to 4096-bit keys. */
const RSA_CIPHERTEXT_BYTES = new Set([128, 256, 384, 512]);

function rsaPhoneError(rsaPhone: string | undefined): string | null {
  if (rsaPhone === undefined || rsaPhone === '') return recipientError('rsa_phone_invalid', 'recipient has no rsa_phone');
  if (!BASE64_PATTERN.test(rsaPhone)) return recipientError('rsa_phone_invalid', 'rsa_phone must be standard base64');
  const bytes = Buffer.byteLength(rsaPhone, 'base64');
  if (!RSA_CIPHERTEXT_BYTES.has(bytes)) return recipientError('rsa_phone_invalid', `${bytes} bytes is not the length of an RSA ciphertext`);
  return null;
}

/** POST /messages/rsa: like batch, but the phone is only ever held encrypted. */
export async function sendRsa({ ctx, input: body }: VerbCall<WorkspaceCaller, RsaInput>): Promise<IdempotentOutcome<AcceptedResult>> {
  return runIdempotently(ctx, body.idempotency, async (claim) => {
    const target = await resolveTarget(ctx, body.template_id, body.send_at);
    const recipients = body.recipients.map((recipient): Candidate => {
      const templateData = recipient.template_data ?? {};
      const echo = echoOf(undefined, recipient.tracking_id);
      const refusal = rsaPhoneError(recipient.rsa_phone) ?? templateDataError(target, templateData);
      if (refusal) return { echo, refusal };
      const fields = { phone: null, rsaPhone: recipient.rsa_phone!, trackingId: recipient.tracking_id, templateData };
      return { echo, message: buildMessage(ctx, target, fields, 'rsa') };
    });
    return acceptRecipients(ctx, 'rsa', target, recipients, claim);
  });
}
