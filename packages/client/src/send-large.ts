/**
 * sendLarge: one template to a recipient list of any size, within the sender account's daily quota.
 *
 * The API guide (docs/api.md, limits) advises comparing `remaining` with the recipient count and sending the
 * remainder the next day, in batches of 100 to 200. So: read the quota, send what fits today, and
 * schedule the rest with `send_at` at the following days' reset (the service reserves quota for the
 * Vietnam day a message will be sent, docs/api.md). The service's answers steer the plan: a
 * recipient refused with `daily_quota_exceeded` closes that day and moves on to the next one, so
 * the plan holds even when the quota read was stale or other senders share the account.
 */
import type { Client } from './client.ts';
import { TmsError } from './errors.ts';
import type { CallOptions } from './transport.ts';
import type { BatchRecipient, BatchRequest, BatchResponse, QuotaEntry, SendMode } from './types.ts';
import { DAY_MS, timeOfDayMs, vietnamDay, vietnamIso } from './vietnam-time.ts';

export const DEFAULT_CHUNK_SIZE = 200;
export const MAX_BATCH_SIZE = 500;
/** The contract's limit on send_at. */
export const MAX_DAYS_AHEAD = 60;
const TRACKING_ID = /^[A-Za-z0-9._-]{1,48}$/;
/** Keeps the last scheduled day clear of the service's 60-day check despite clock skew. */
const HORIZON_MARGIN_MS = 10 * 60_000;

export interface SendLargeChunk {
  /** Positions in `recipients`, in the order of `body.recipients`. */
  indexes: number[];
  /** The exact batch request; send it again with `idempotencyKey` to settle an unknown outcome. */
  body: BatchRequest;
  idempotencyKey: string;
  /** Vietnam day (`YYYY-MM-DD`) the chunk is meant for. */
  day: string;
}

export interface SendLargeProgress {
  total: number;
  /** Recipients with a final outcome so far. */
  done: number;
  queued: number;
  scheduled: number;
  errors: number;
  /** The Vietnam day being filled. */
  day: string;
}

interface OutcomeBase {
  /** Position in the recipients given. */
  index: number;
  phone: string;
  tracking_id?: string;
}

export type SendLargeOutcome =
  | (OutcomeBase & { status: 'queued'; msg_id: string; scheduled_at: null; day: string })
  | (OutcomeBase & { status: 'scheduled'; msg_id: string; scheduled_at: string; day: string })
  | (OutcomeBase & { status: 'error'; error: string });

export interface SendLargeDay {
  day: string;
  /** null for today (sent now). */
  send_at: string | null;
  accepted: number;
}

export interface SendLargeReport {
  total: number;
  queued: number;
  scheduled: number;
  errors: number;
  /** One per recipient, in the order given. */
  results: SendLargeOutcome[];
  days: SendLargeDay[];
  /** The quota entry the plan started from (null when it could not be read). */
  quota: QuotaEntry | null;
  /**
   * Set when a request failed in a way that stops the run (wallet, key, network after retries):
   * its recipients and those not yet tried carry errors; the rest of the report stands.
   */
  stoppedBy: TmsError | null;
}

export interface SendLargeOptions {
  templateId: string;
  recipients: readonly BatchRecipient[];
  mode?: SendMode;
  /**
   * The template's sender account, whose quota is read (GET /quota, scope messages:read). When omitted
   * it is looked up with GET /templates (scope templates:read). Without either scope the plan is
   * steered by the service's daily_quota_exceeded answers alone.
   */
  oaId?: string;
  /** Recipients per batch request, 1 to 500 (default 200, the contract's advice). */
  chunkSize?: number;
  /** Vietnam time of day (`HH:MM`) for the following days' sends. Default: the quota reset itself (00:00). */
  sendTimeOfDay?: string;
  /** How many days ahead may be scheduled (default and maximum 60, the contract's send_at limit). */
  maxDaysAhead?: number;
  onProgress?: (progress: SendLargeProgress) => void;
  /** Awaited before each batch request: persist `chunk` to make a crash resumable without duplicates. */
  beforeChunk?: (chunk: SendLargeChunk) => void | Promise<void>;
  /** Awaited after each batch request with its response, or the error that ended it. */
  afterChunk?: (chunk: SendLargeChunk, outcome: { response: BatchResponse } | { error: TmsError }) => void | Promise<void>;
  signal?: AbortSignal;
  /** Timeout and retries for each request. */
  requestOptions?: Pick<CallOptions, 'timeoutMs' | 'maxRetries'>;
}

/** Checks the service would refuse for the whole batch (a bad tracking_id makes a batch 400), made per recipient here. */
function localProblem(recipient: BatchRecipient): string | null {
  if (typeof recipient.phone !== 'string' || recipient.phone.trim() === '') return 'missing_phone: the recipient has no phone number';
  if (recipient.tracking_id !== undefined && !TRACKING_ID.test(recipient.tracking_id)) {
    return 'invalid_tracking_id: at most 48 letters, digits, dots, hyphens or underscores';
  }
  return null;
}

/** Reads that only refine the plan: without the scope for them, the service's own answers steer it. */
function tolerated(error: unknown): null {
  if (error instanceof TmsError && (error.status === 403 || error.status === 404)) return null;
  throw error;
}

async function senderAccountOf(client: Client, templateId: string, options: CallOptions): Promise<string | null> {
  try {
    const { templates } = await client.templates.list({}, options);
    // Not found: the first batch request reports it as the service words it (404).
    return templates.find((candidate) => candidate.template_id === templateId)?.oa_id ?? null;
  } catch (error) {
    return tolerated(error);
  }
}

async function readQuota(client: Client, oaId: string, options: CallOptions): Promise<QuotaEntry | null> {
  try {
    const { quotas } = await client.quota.get({ oa_id: oaId }, options);
    const entry = quotas.find((candidate) => candidate.oa_id === oaId);
    return entry && entry.error === null ? entry : null;
  } catch (error) {
    return tolerated(error);
  }
}

/** Midnight starting the next Vietnam day, for when the quota could not be read. */
function nextVietnamMidnight(now: number): number {
  return Date.parse(`${vietnamDay(now)}T00:00:00.000+07:00`) + DAY_MS;
}

export async function sendLarge(client: Client, options: SendLargeOptions): Promise<SendLargeReport> {
  const { templateId, recipients, signal } = options;
  if (typeof templateId !== 'string' || templateId === '') throw new TypeError('templateId is required');
  const chunkSize = Math.floor(options.chunkSize ?? DEFAULT_CHUNK_SIZE);
  if (!(chunkSize >= 1 && chunkSize <= MAX_BATCH_SIZE)) throw new RangeError(`chunkSize must be 1 to ${MAX_BATCH_SIZE}`);
  const maxDaysAhead = Math.min(MAX_DAYS_AHEAD, options.maxDaysAhead ?? MAX_DAYS_AHEAD);
  const timeOfDay = options.sendTimeOfDay === undefined ? 0 : timeOfDayMs(options.sendTimeOfDay);
  const callOptions: CallOptions = { ...options.requestOptions, signal };

  const results: (SendLargeOutcome | undefined)[] = new Array(recipients.length);
  const counts = { queued: 0, scheduled: 0, errors: 0 };
  const base = (index: number): OutcomeBase => {
    const recipient = recipients[index]!;
    return recipient.tracking_id === undefined ? { index, phone: recipient.phone } : { index, phone: recipient.phone, tracking_id: recipient.tracking_id };
  };
  const fail = (index: number, error: string) => {
    results[index] = { ...base(index), status: 'error', error };
    counts.errors += 1;
  };

  let pending: number[] = [];
  recipients.forEach((recipient, index) => {
    const problem = localProblem(recipient);
    if (problem) fail(index, problem);
    else pending.push(index);
  });

  const report = (days: SendLargeDay[], quota: QuotaEntry | null, stoppedBy: TmsError | null): SendLargeReport => ({
    total: recipients.length,
    ...counts,
    results: results as SendLargeOutcome[],
    days,
    quota,
    stoppedBy,
  });
  if (pending.length === 0) return report([], null, null);

  const oaId = options.oaId ?? (await senderAccountOf(client, templateId, callOptions));
  const quota = oaId === null ? null : await readQuota(client, oaId, callOptions);
  const startedAt = Date.now();
  const readReset = quota ? Date.parse(quota.reset_at) : Number.NaN;
  const firstReset = Number.isNaN(readReset) ? nextVietnamMidnight(startedAt) : readReset;
  const horizon = startedAt + maxDaysAhead * DAY_MS - HORIZON_MARGIN_MS;
  // Unknown quota: send and let the service's daily_quota_exceeded answers find the limit.
  const todayCapacity = quota ? quota.remaining : Number.POSITIVE_INFINITY;
  const dailyCapacity = quota ? quota.daily_quota : Number.POSITIVE_INFINITY;

  const days: SendLargeDay[] = [];
  let stoppedBy: TmsError | null = null;

  for (let dayIndex = 0; pending.length > 0 && stoppedBy === null; dayIndex += 1) {
    const sendAtMs = dayIndex === 0 ? null : firstReset + (dayIndex - 1) * DAY_MS + timeOfDay;
    if (sendAtMs !== null && sendAtMs > horizon) break;
    const sendAt = sendAtMs === null ? null : vietnamIso(sendAtMs);
    const day = vietnamDay(sendAtMs ?? startedAt);
    const summary: SendLargeDay = { day, send_at: sendAt, accepted: 0 };
    let capacity = dayIndex === 0 ? todayCapacity : dailyCapacity;

    while (capacity > 0 && pending.length > 0) {
      const indexes = pending.slice(0, Math.min(chunkSize, capacity));
      pending = pending.slice(indexes.length);
      const body: BatchRequest = { template_id: templateId, recipients: indexes.map((index) => recipients[index]!) };
      if (sendAt !== null) body.send_at = sendAt;
      if (options.mode !== undefined) body.mode = options.mode;
      const chunk: SendLargeChunk = { indexes, body, idempotencyKey: crypto.randomUUID(), day };

      await options.beforeChunk?.(chunk);
      let response: BatchResponse;
      try {
        response = await client.messages.batch(body, { ...callOptions, idempotencyKey: chunk.idempotencyKey });
      } catch (error) {
        if (!(error instanceof TmsError)) throw error;
        await options.afterChunk?.(chunk, { error });
        if (error.status === 400) {
          // This chunk was malformed for the service; the others may be fine.
          for (const index of indexes) fail(index, `bad_request: ${error.message}`);
        } else {
          const why = error.outcomeUnknown
            ? `unknown_outcome: ${error.message} (resend this chunk with Idempotency-Key ${chunk.idempotencyKey} to settle it)`
            : `${error.kind}: ${error.message}`;
          for (const index of indexes) fail(index, why);
          for (const index of pending) fail(index, `not_sent: stopped after an earlier chunk failed (${error.message})`);
          pending = [];
          stoppedBy = error;
        }
        options.onProgress?.(progress(recipients.length, counts, day));
        continue;
      }
      await options.afterChunk?.(chunk, { response });

      const overQuota: number[] = [];
      indexes.forEach((index, position) => {
        const item = response.results[position];
        if (item?.status === 'queued' && item.msg_id !== undefined) {
          if (response.scheduled_at === null) {
            results[index] = { ...base(index), status: 'queued', msg_id: item.msg_id, scheduled_at: null, day };
            counts.queued += 1;
          } else {
            results[index] = { ...base(index), status: 'scheduled', msg_id: item.msg_id, scheduled_at: response.scheduled_at, day };
            counts.scheduled += 1;
          }
          summary.accepted += 1;
        } else if (item?.error?.startsWith('daily_quota_exceeded')) {
          overQuota.push(index);
        } else {
          fail(index, item?.error ?? 'invalid_response: the service returned no result for this recipient');
        }
      });
      capacity -= response.accepted;
      if (overQuota.length > 0) {
        // The day is full: these go first on the next day, keeping the list's order.
        pending = [...overQuota, ...pending];
        capacity = 0;
      }
      options.onProgress?.(progress(recipients.length, counts, day));
    }
    if (summary.accepted > 0) days.push(summary);
  }

  for (const index of pending) {
    fail(index, `daily_quota_exceeded: no room within ${maxDaysAhead} days (daily quota ${quota ? quota.daily_quota : 'unknown'})`);
  }
  return report(days, quota, stoppedBy);
}

function progress(total: number, counts: { queued: number; scheduled: number; errors: number }, day: string): SendLargeProgress {
  return { total, done: counts.queued + counts.scheduled + counts.errors, ...counts, day };
}
