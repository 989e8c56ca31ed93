import { sha256Hex } from '../lib/crypto.ts';
import { Semaphore } from '../lib/semaphore.ts';
import { nextVietnamMidnight } from '../lib/vietnam-time.ts';
import { describePlatformError, GATEWAY_ERRORS, type PlatformError } from '../platform/error-catalogue.ts';
import { PlatformUnavailableError, type SendRequest } from '../platform/zns-client.ts';
import { claimDueMessages, recordDispatchOutcomes, reconcileExpiredClaims, type ClaimedMessage, type DispatchOutcome } from '../store/dispatch-queue.ts';
import type { Dependencies } from './context.ts';
import { ReloginRequiredError, type AccessTokens } from './platform-tokens.ts';

export interface DispatchSettings {
  /** Messages claimed per round. */
  batchSize: number;
  /** How long a claim is ours; a worker that dies lets its claims expire for the reconciler. */
  leaseMs: number;
  /** Sends in flight per sender account, across all rounds of this process. */
  perAccountConcurrency: number;
  /** Attempts before a transient fault becomes a failure (decisions.md: 5). */
  maxAttempts: number;
  /** First retry delay; doubles per attempt, with jitter, up to 5 minutes. */
  backoffBaseMs: number;
  /** How long a dead worker's unconfirmed send waits for a trace (a delivery event) before it is sent again. */
  unconfirmedGraceMs: number;
}

export const DEFAULT_DISPATCH_SETTINGS: DispatchSettings = {
  batchSize: 500,
  leaseMs: 60_000,
  perAccountConcurrency: 200,
  maxAttempts: 5,
  backoffBaseMs: 1000,
  unconfirmedGraceMs: 300_000,
};

const MAX_BACKOFF_MS = 5 * 60_000;
const OUTCOME_WRITE_ATTEMPTS = 5;
const NIGHT_WINDOW_END_HOUR = 6;

type DispatchDependencies = Pick<Dependencies, 'store' | 'clock' | 'catalog' | 'platform' | 'log' | 'metrics'>;

/** Sends claimed messages for the platform, one semaphore per sender account. */
export class MessageDispatcher {
  private readonly limits = new Map<string, Semaphore>();

  constructor(
    private readonly deps: DispatchDependencies,
    private readonly tokens: Pick<AccessTokens, 'accessTokenFor' | 'reportRejected'>,
    readonly settings: DispatchSettings = DEFAULT_DISPATCH_SETTINGS,
  ) {}

  /** Claims one round of due messages, sends them and records the outcomes. Returns how many it claimed. */
  async dispatchRound(): Promise<number> {
    const { store, clock } = this.deps;
    const claimed = await claimDueMessages(store, { now: clock(), limit: this.settings.batchSize, leaseMs: this.settings.leaseMs });
    if (claimed.length === 0) return 0;
    const byAccount = new Map<string, ClaimedMessage[]>();
    for (const message of claimed) byAccount.set(message.oa_id, [...(byAccount.get(message.oa_id) ?? []), message]);
    const outcomes = (await Promise.all([...byAccount.values()].map((messages) => this.sendForAccount(messages)))).flat();
    await this.recordOutcomes(outcomes);
    this.count(outcomes);
    return claimed.length;
  }

  private count(outcomes: DispatchOutcome[]): void {
    const { metrics } = this.deps;
    for (const outcome of outcomes) {
      metrics.dispatchOutcomes.inc({ outcome: outcome.kind });
      if (outcome.kind === 'sent') metrics.dispatchLatency.observe(Math.max(0, outcome.sentAt - outcome.message.due_at) / 1000);
    }
  }

  /**
   * The sends have happened: losing their outcomes would make the reconciler send them again, so a
   * failed write (a dropped connection, a busy database) is retried before giving up.
   */
  private async recordOutcomes(outcomes: DispatchOutcome[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await recordDispatchOutcomes(this.deps.store, outcomes, this.deps.clock());
        return;
      } catch (error) {
        if (attempt >= OUTCOME_WRITE_ATTEMPTS) throw error;
        this.deps.log.warn({ err: error, attempt }, 'recording dispatch outcomes failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }

  /** Reconciles claims whose worker died (store/dispatch-queue.ts reconcileExpiredClaims). */
  async reconcileExpiredClaims(): Promise<void> {
    const { unconfirmed, requeued } = await reconcileExpiredClaims(this.deps.store, {
      now: this.deps.clock(),
      limit: this.settings.batchSize,
      graceMs: this.settings.unconfirmedGraceMs,
    });
    const { log } = this.deps;
    if (unconfirmed.length > 0) log.warn({ count: unconfirmed.length, first: unconfirmed[0] }, 'claims expired with the send unconfirmed; waiting for a delivery event before sending again');
    if (requeued.length > 0) log.warn({ count: requeued.length, first: requeued[0] }, 'unconfirmed sends left no trace at the platform; requeued');
  }

  private limitFor(oaId: string): Semaphore {
    let limit = this.limits.get(oaId);
    if (!limit) {
      limit = new Semaphore(this.settings.perAccountConcurrency);
      this.limits.set(oaId, limit);
    }
    return limit;
  }

  private async sendForAccount(messages: ClaimedMessage[]): Promise<DispatchOutcome[]> {
    const first = messages[0]!;
    const account = await this.deps.catalog.senderAccount(first.workspace_id, first.oa_id);
    if (!account || account.status === 'disconnected') return messages.map((message) => this.failure(message, GATEWAY_ERRORS.senderAccountDisconnected));
    const limit = this.limitFor(first.oa_id);
    return Promise.all(messages.map((message) => limit.run(() => this.sendOne(message))));
  }

  private async sendOne(message: ClaimedMessage): Promise<DispatchOutcome> {
    const template = await this.deps.catalog.template(message.workspace_id, message.template_id);
    if (!template || template.status !== 'ENABLE') return this.failure(message, GATEWAY_ERRORS.templateNotEnabled);
    let token: string;
    try {
      token = await this.tokens.accessTokenFor(message.oa_id);
    } catch (error) {
      if (error instanceof ReloginRequiredError) return this.failure(message, GATEWAY_ERRORS.reloginRequired);
      return this.transientFault(message, error);
    }
    try {
      const result = await this.deps.platform.sendMessage(token, toSendRequest(message));
      if (result.ok) return { kind: 'sent', message, providerMsgId: result.data.msgId, sentAt: this.deps.clock() };
      this.deps.metrics.platformErrors.inc({ code: String(result.code) });
      const error = describePlatformError(result.code, result.message);
      if (error.retry === 'refresh_token') {
        this.tokens.reportRejected(message.oa_id, token);
        return this.retryOrFail(message, this.deps.clock(), error);
      }
      if (error.retry === 'backoff') return this.retryOrFail(message, this.backoffDue(message), error);
      if (error.retry === 'after_night_window') return { kind: 'retry', message, dueAt: nextNightWindowEnd(this.deps.clock()) };
      return this.failure(message, { ...error, message: result.message || error.message });
    } catch (error) {
      return this.transientFault(message, error);
    }
  }

  private transientFault(message: ClaimedMessage, error: unknown): DispatchOutcome {
    if (!(error instanceof PlatformUnavailableError)) this.deps.log.error({ err: error, msg_id: message.id }, 'unexpected dispatch error');
    else this.deps.log.warn({ msg_id: message.id, err: error.message }, 'platform unavailable; will retry');
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
    return this.deps.clock() + Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private failure(message: ClaimedMessage, error: PlatformError): DispatchOutcome {
    return { kind: 'failed', message, code: error.code, errorMessage: error.message, reason: error.reason };
  }
}

/** What the platform gets: our msg_id as its tracking_id, so delivery events map back to us. */
export function toSendRequest(message: ClaimedMessage): SendRequest {
  const templateData = JSON.parse(message.template_data) as Record<string, string>;
  if (message.mode === 'rsa') return { kind: 'rsa', recipient: message.rsa_phone ?? '', templateId: message.template_id, templateData, trackingId: message.id };
  if (message.mode === 'hashphone') return { kind: 'hashphone', recipient: sha256Hex(message.phone ?? ''), templateId: message.template_id, templateData, trackingId: message.id };
  return { kind: 'plain', recipient: message.phone ?? '', templateId: message.template_id, templateData, trackingId: message.id };
}

/** 06:00 Vietnam time after a refusal for the 22:00–06:00 night window. */
export function nextNightWindowEnd(now: number): number {
  const sixToday = nextVietnamMidnight(now) - 24 * 60 * 60 * 1000 + NIGHT_WINDOW_END_HOUR * 60 * 60 * 1000;
  return sixToday > now ? sixToday : sixToday + 24 * 60 * 60 * 1000;
}

