import { sha256Hex } from '../../lib/crypto.ts';
import { retryWrite } from '../../lib/retry-write.ts';
import { Semaphore } from '../../lib/semaphore.ts';
import { nextVietnamMidnight } from '../../lib/vietnam-time.ts';
import { describePlatformError, GATEWAY_ERRORS, type PlatformError } from '../../platform/error-catalogue.ts';
import { InvalidPlatformRequestError, PlatformUnavailableError, type SendRequest, type UnknownOutcomeCause } from '../../platform/zns-client.ts';
import { claimDueMessages, recordDispatchOutcomes, reconcileExpiredClaims, type ClaimedMessage, type DispatchOutcome } from '../../store/dispatch-queue.ts';
import type { ServiceParts } from '../../services/context.ts';
import { ReloginRequiredError, type AccessTokens } from '../../caches/access-tokens.ts';

export type { ClaimedMessage, DispatchOutcome } from '../../store/dispatch-queue.ts';

export interface DispatchSettings {
  /** Messages claimed per round. */
  batchSize: number;
  /** How long a claim is ours; a worker that dies lets its claims expire for the reconciler. */
  leaseMs: number;
  /** Sends in flight per sender account, across all rounds of this process. */
  perAccountConcurrency: number;
  /** Attempts before a transient fault becomes a failure (docs/api.md: 5). */
  maxAttempts: number;
  /** First retry delay; doubles per attempt, with jitter, up to 5 minutes. */
  backoffBaseMs: number;
  /**
   * How long a send whose outcome is unknown (a dead worker's claim, a send that timed out) waits
   * for a trace (a delivery event) before it is sent again.
   */
  unconfirmedGraceMs: number;
  /** The deadline of one platform call (ZNS_TIMEOUT_MS): a send starts only if its claim outlives it. */
  platformTimeoutMs: number;
}

const DEFAULT_DISPATCH_SETTINGS: DispatchSettings = {
  batchSize: 500,
  leaseMs: 60_000,
  perAccountConcurrency: 200,
  maxAttempts: 5,
  backoffBaseMs: 1000,
  unconfirmedGraceMs: 300_000,
  platformTimeoutMs: 10_000,
};

const MAX_BACKOFF_MS = 5 * 60_000;
const NIGHT_WINDOW_END_HOUR = 6;
/** Time a claim must have left after a send's deadline, to record the outcome under it. */
const RECORDING_MARGIN_MS = 2000;

type DispatchParts = Pick<ServiceParts, 'store' | 'clock' | 'catalog' | 'platform' | 'log' | 'metrics'>;

/**
 * Sends claimed messages to the platform and records their outcomes. A send's outcome is one of:
 * - known: sent (with the platform's id), failed (refunded) or retried later, because the platform
 *   answered, or because the request certainly never reached it (no connection, refused before it
 *   was written, a 429 or 503);
 * - unknown: the request was written and no readable answer came (the deadline passed, the
 *   connection broke). The platform may have taken it, so it is never retried blindly: it waits
 *   unconfirmed for a delivery event like a dead worker's claim (see reconcileExpiredClaims).
 */
export class MessageDispatcher {
  private readonly limits = new Map<string, Semaphore>();

  constructor(
    private readonly parts: DispatchParts,
    private readonly tokens: Pick<AccessTokens, 'accessTokenFor' | 'reportRejected'>,
    readonly settings: DispatchSettings = DEFAULT_DISPATCH_SETTINGS,
  ) {}

  /** Claims up to `limit` due messages, none of the sender accounts in `skipAccounts`. */
  claim(limit: number, skipAccounts: readonly string[] = []): Promise<ClaimedMessage[]> {
    const { store, clock } = this.parts;
    return claimDueMessages(store, { now: clock(), limit, leaseMs: this.settings.leaseMs, skipAccounts });
  }

  /**
   * One round on its own: claims, sends (per-account concurrency), records. Returns how many it
   * claimed. The worker's loop (loop.ts) uses claim, send and record instead, so that
   * one sender account's slow sends never hold up another's.
   */
  async dispatchRound(): Promise<number> {
    const claimed = await this.claim(this.settings.batchSize);
    if (claimed.length === 0) return 0;
    const outcomes = await Promise.all(claimed.map((message) => this.limitFor(message.oa_id).run(() => this.send(message))));
    await this.record(outcomes);
    return claimed.length;
  }

  private count(outcomes: DispatchOutcome[]): void {
    const { metrics } = this.parts;
    for (const outcome of outcomes) {
      // A released claim was never attempted: it is no dispatch outcome.
      if (outcome.kind === 'released') continue;
      metrics.dispatchOutcomes.inc({ outcome: outcome.kind });
      if (outcome.kind === 'sent') metrics.dispatchLatency.observe(Math.max(0, outcome.sentAt - outcome.message.due_at) / 1000);
    }
  }

  /**
   * Records outcomes in one transaction. The sends have happened: losing their outcomes would make
   * the reconciler treat them as unknown, so a failed write (a dropped connection, a busy database)
   * is retried before giving up.
   */
  async record(outcomes: DispatchOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await retryWrite(
      () => recordDispatchOutcomes(this.parts.store, outcomes, this.parts.clock()),
      (error, attempt) => this.parts.log.warn({ err: error, attempt }, 'recording dispatch outcomes failed; retrying'),
    );
    this.count(outcomes);
  }

  /**
   * Reconciles claims whose worker died and sends whose outcome was unknown
   * (store/dispatch-queue.ts reconcileExpiredClaims).
   */
  async reconcileExpiredClaims(): Promise<void> {
    const exhausted = GATEWAY_ERRORS.retriesExhausted;
    const { unconfirmed, requeued, failed } = await reconcileExpiredClaims(this.parts.store, {
      now: this.parts.clock(),
      limit: this.settings.batchSize,
      graceMs: this.settings.unconfirmedGraceMs,
      maxAttempts: this.settings.maxAttempts,
      exhausted: { code: exhausted.code, message: `${exhausted.message} (the last attempt's outcome stayed unknown)`, reason: exhausted.reason },
    });
    const { log, metrics } = this.parts;
    if (unconfirmed.length > 0) {
      metrics.unknownOutcomes.inc({ cause: 'expired_claim' }, unconfirmed.length);
      log.warn({ count: unconfirmed.length, first: unconfirmed[0] }, 'claims expired with the send unconfirmed; waiting for a delivery event before sending again');
    }
    if (requeued.length > 0) {
      metrics.unconfirmedResends.inc(requeued.length);
      log.warn({ count: requeued.length, first: requeued[0] }, 'unconfirmed sends left no trace at the platform; requeued');
    }
    if (failed.length > 0) {
      metrics.dispatchOutcomes.inc({ outcome: 'failed' }, failed.length);
      log.warn({ count: failed.length, first: failed[0] }, 'unconfirmed sends left no trace and had no attempt left; failed and refunded');
    }
  }

  private limitFor(oaId: string): Semaphore {
    let limit = this.limits.get(oaId);
    if (!limit) {
      limit = new Semaphore(this.settings.perAccountConcurrency);
      this.limits.set(oaId, limit);
    }
    return limit;
  }

  /** Sends one claimed message and says what became of it. Never throws. */
  async send(message: ClaimedMessage): Promise<DispatchOutcome> {
    let token: string;
    try {
      const account = await this.parts.catalog.senderAccount(message.workspace_id, message.oa_id);
      if (!account || account.status === 'disconnected') return this.failure(message, GATEWAY_ERRORS.senderAccountDisconnected);
      const template = await this.parts.catalog.template(message.workspace_id, message.template_id);
      if (!template || template.status !== 'ENABLE') return this.failure(message, GATEWAY_ERRORS.templateNotEnabled);
      token = await this.tokens.accessTokenFor(message.oa_id);
    } catch (error) {
      if (error instanceof ReloginRequiredError) return this.failure(message, GATEWAY_ERRORS.reloginRequired);
      // Nothing was sent yet: a plain retry is safe.
      return this.transientFault(message, error);
    }
    // A send that could outlive its claim might be taken over by the reconciler while in flight.
    if (!this.claimOutlivesSend(message)) return { kind: 'released', message, dueAt: this.parts.clock() };
    try {
      const result = await this.parts.platform.sendMessage(token, toSendRequest(message));
      if (result.ok) return { kind: 'sent', message, providerMsgId: result.data.msgId, sentAt: this.parts.clock() };
      this.parts.metrics.platformErrors.inc({ code: String(result.code), call: 'send' });
      const error = describePlatformError(result.code, result.message);
      if (error.retry === 'refresh_token') {
        this.tokens.reportRejected(message.oa_id, token);
        return this.retryOrFail(message, this.parts.clock(), error);
      }
      if (error.retry === 'backoff') return this.retryOrFail(message, this.backoffDue(message), error);
      if (error.retry === 'after_night_window') return { kind: 'retry', message, dueAt: nextNightWindowEnd(this.parts.clock()) };
      return this.failure(message, { ...error, message: result.message || error.message });
    } catch (error) {
      if (error instanceof InvalidPlatformRequestError) {
        // Refused before a byte was written. The only header of a send is the access token: a
        // fresh one may do, so forget this one and retry.
        this.parts.log.error({ msg_id: message.id, oaId: message.oa_id, err: error.message }, 'send not attempted: a header value cannot be sent');
        this.tokens.reportRejected(message.oa_id, token);
        return this.retryOrFail(message, this.backoffDue(message), GATEWAY_ERRORS.retriesExhausted);
      }
      if (error instanceof PlatformUnavailableError) {
        if (error.unknownOutcome !== null) return this.unconfirmed(message, error.unknownOutcome, error);
        return this.transientFault(message, error);
      }
      // Not the client's own failure: something broke after the request went out (reading the
      // answer), so the platform may have taken it.
      this.parts.log.error({ err: error, msg_id: message.id }, 'unexpected error around a send');
      return this.unconfirmed(message, 'ambiguous_answer', error);
    }
  }

  private claimOutlivesSend(message: ClaimedMessage): boolean {
    if (message.lease_expires_at === null) return true;
    const needed = Math.min(this.settings.platformTimeoutMs + RECORDING_MARGIN_MS, this.settings.leaseMs / 2);
    return message.lease_expires_at - this.parts.clock() >= needed;
  }

  /** The send may be at the platform: wait for a trace instead of sending it again now. */
  private unconfirmed(message: ClaimedMessage, cause: UnknownOutcomeCause, error: unknown): DispatchOutcome {
    this.parts.metrics.unknownOutcomes.inc({ cause });
    this.parts.log.warn(
      { msg_id: message.id, oaId: message.oa_id, cause, err: error instanceof Error ? error.message : String(error) },
      'send outcome unknown; waiting for a delivery event before sending again',
    );
    return { kind: 'unconfirmed', message, waitUntil: this.parts.clock() + this.settings.unconfirmedGraceMs };
  }

  private transientFault(message: ClaimedMessage, error: unknown): DispatchOutcome {
    if (!(error instanceof PlatformUnavailableError)) this.parts.log.error({ err: error, msg_id: message.id }, 'unexpected dispatch error');
    else this.parts.log.warn({ msg_id: message.id, err: error.message }, 'platform unavailable; will retry');
    return this.retryOrFail(message, this.backoffDue(message), GATEWAY_ERRORS.retriesExhausted);
  }

  /** Requeues, unless this was the last attempt: then the message fails as retries exhausted. */
  private retryOrFail(message: ClaimedMessage, dueAt: number, lastError: PlatformError): DispatchOutcome {
    if (message.attempts >= this.settings.maxAttempts) {
      const exhausted = GATEWAY_ERRORS.retriesExhausted;
      const detail = lastError.code === exhausted.code ? '' : ` (last: ${lastError.code} ${lastError.message})`;
      return this.failure(message, { ...exhausted, message: `${exhausted.message}${detail}` });
    }
    return { kind: 'retry', message, dueAt };
  }

  private backoffDue(message: ClaimedMessage): number {
    const base = Math.min(MAX_BACKOFF_MS, this.settings.backoffBaseMs * 2 ** Math.max(0, message.attempts - 1));
    // Jitter spreads a burst of retries so a recovering platform is not hit all at once.
    return this.parts.clock() + Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private failure(message: ClaimedMessage, error: PlatformError): DispatchOutcome {
    return { kind: 'failed', message, code: error.code, errorMessage: error.message, reason: error.reason };
  }
}

/** What the platform gets: our msg_id as its tracking_id, so delivery events map back to us. */
function toSendRequest(message: ClaimedMessage): SendRequest {
  const templateData = JSON.parse(message.template_data) as Record<string, string>;
  if (message.mode === 'rsa') return { kind: 'rsa', recipient: message.rsa_phone ?? '', templateId: message.template_id, templateData, trackingId: message.id };
  if (message.mode === 'hashphone') return { kind: 'hashphone', recipient: sha256Hex(message.phone ?? ''), templateId: message.template_id, templateData, trackingId: message.id };
  return { kind: 'plain', recipient: message.phone ?? '', templateId: message.template_id, templateData, trackingId: message.id };
}

/** 06:00 Vietnam time after a refusal for the 22:00–06:00 night window. */
function nextNightWindowEnd(now: number): number {
  const sixToday = nextVietnamMidnight(now) - 24 * 60 * 60 * 1000 + NIGHT_WINDOW_END_HOUR * 60 * 60 * 1000;
  return sixToday > now ? sixToday : sixToday + 24 * 60 * 60 * 1000;
}

