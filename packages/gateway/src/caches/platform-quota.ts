/**
 * The platform's daily quota per sender account (docs/zns-platform.md), cached in this
 * process so that neither GET /quota nor batch acceptance pays a platform call per request.
 *
 * What a lookup keeps is chosen to stay true while we send. The platform's remainingQuota counts
 * what it has sent today, ours and anyone else's on the same OA; our reservations count everything
 * we accepted for today, sent or still queued. Subtracting one from the other would count our sent
 * messages twice, so a lookup reduces both to one figure:
 *
 *   usedElsewhere = (platform dailyQuota − platform remainingQuota) − (reserved − outstanding)
 *
 * what the platform counted today beyond the messages of ours that reached it (reserved minus the
 * outstanding ones: queued or in flight). Each send of ours moves both terms by one, so the figure
 * does not drift as we send; it changes only with other systems' sends or a new tier, which is why
 * a lookup cached for a bounded time is safe to use. Acceptance then grants
 *
 *   room = dailyQuota − usedElsewhere − reserved(now)    (= remainingQuota − outstanding at lookup time)
 *
 * with reserved(now) read under the quota row lock inside the acceptance transaction
 * (store/acceptances.ts), so concurrent group commits never grant more than the room.
 */
import { nextVietnamMidnight, vietnamDay } from '../lib/vietnam-time.ts';
import { describePlatformError } from '../platform/error-catalogue.ts';
import { PlatformUnavailableError } from '../platform/zns-client.ts';
import { readQuotaUsage } from '../store/quota-usage.ts';
import { ReloginRequiredError, type AccessTokenDependencies, type AccessTokens } from './access-tokens.ts';

/** What one successful lookup learnt. */
export interface PlatformQuotaFigures {
  /** The Vietnam day the lookup was made on. */
  readonly day: string;
  /** The platform's daily quota: the OA's tier. */
  readonly dailyQuota: number;
  /** That day's platform use that our own sent messages do not explain (see above); never negative. */
  readonly usedElsewhere: number;
}

/** The platform's figures, or why there are none: `error` null with no figures means lookups are off. */
export type QuotaLookup =
  | { readonly figures: PlatformQuotaFigures; readonly error: null }
  | { readonly figures: null; readonly error: string | null };

/** One sender account's quota on one day, as GET /quota reports it and batch acceptance enforces it. */
export interface DailyQuota {
  /** The platform's tier when it answered, else the account's configured daily_quota. */
  dailyQuota: number;
  /** Platform use beyond ours, known only for the day of the lookup (0 for other days and without figures). */
  usedElsewhere: number;
  /** Why the platform's figures are missing (the configured daily_quota is used then). */
  error: string | null;
}

/**
 * The quota to enforce on `day`. Acceptance reserves against `dailyQuota - usedElsewhere`; the store
 * subtracts what is already reserved for that day. Future days (scheduled sends) have no platform
 * count yet, so only the tier applies; without platform figures the configured daily_quota does.
 */
export function dailyQuotaOn(lookup: QuotaLookup, configuredDailyQuota: number, day: string): DailyQuota {
  if (lookup.figures === null) return { dailyQuota: configuredDailyQuota, usedElsewhere: 0, error: lookup.error };
  const { figures } = lookup;
  return { dailyQuota: figures.dailyQuota, usedElsewhere: figures.day === day ? figures.usedElsewhere : 0, error: null };
}

export type PlatformQuotaDependencies = Pick<AccessTokenDependencies, 'store' | 'clock' | 'log' | 'platform'>;

export interface PlatformQuotaSettings {
  /** How long a successful lookup is used before the platform is asked again; 0 turns lookups off. */
  cacheMs: number;
  /** How long a failed lookup is remembered, so that an outage is not asked again on every request. */
  retryMs: number;
  /** How long a request that finds nothing cached waits for the lookup before going on without it. */
  waitMs: number;
}

const LOOKUPS_OFF: QuotaLookup = { figures: null, error: null };
/**
 * Today's messages that have not reached the platform include some due after midnight: a night
 * window refusal (-133) requeues until 06:00, backoff adds minutes. Counting queued rows due up to
 * noon tomorrow takes them in (counted as outstanding: conservative) without reading far-ahead
 * scheduled messages on every lookup.
 */
const TODAYS_RETRIES_MARGIN_MS = 12 * 60 * 60 * 1000;

interface Entry {
  lookup: QuotaLookup;
  /** From then on a request starts a background refresh. */
  refreshAfter: number;
  /** From then on the figure is not used at all. */
  expiresAt: number;
}

/**
 * Per-process cache of platform quota lookups, one entry per sender account. A figure is never used
 * once it is older than its time to live (`cacheMs`, or `retryMs` for a failure), because a batch
 * reserved against an outdated figure can accept more than the platform will send.
 * - Fresh entry: answered from memory. Past half its life, one lookup refreshes it in the
 *   background (refresh-ahead), so a busy OA gets its next figure before this one expires.
 * - Expired or no entry: the request waits for the lookup at most `waitMs`, then goes on without
 *   figures (the configured daily_quota applies); the answer is still cached when it arrives.
 * Concurrent misses share one lookup.
 */
export class PlatformQuota {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<QuotaLookup>>();

  constructor(
    private readonly deps: PlatformQuotaDependencies,
    private readonly tokens: Pick<AccessTokens, 'accessTokenFor' | 'reportRejected'>,
    private readonly settings: PlatformQuotaSettings,
  ) {}

  async lookup(oaId: string): Promise<QuotaLookup> {
    if (this.settings.cacheMs <= 0) return LOOKUPS_OFF;
    const entry = this.entries.get(oaId);
    const now = this.deps.clock();
    if (entry && entry.expiresAt > now) {
      if (entry.refreshAfter <= now) void this.refresh(oaId);
      return entry.lookup;
    }
    return this.waitAtMost(this.refresh(oaId));
  }

  /** Drops what is cached for the OA (its tier changed): the next request asks the platform. */
  forget(oaId: string): void {
    this.entries.delete(oaId);
    this.inFlight.delete(oaId);
  }

  private refresh(oaId: string): Promise<QuotaLookup> {
    const running = this.inFlight.get(oaId);
    if (running) return running;
    const started: Promise<QuotaLookup> = this.ask(oaId).then((lookup) => {
      // Only the current lookup is stored: a forget() meanwhile means its answer may be outdated.
      if (this.inFlight.get(oaId) === started) {
        this.inFlight.delete(oaId);
        const ttlMs = lookup.error === null ? this.settings.cacheMs : this.settings.retryMs;
        const storedAt = this.deps.clock();
        this.entries.set(oaId, { lookup, refreshAfter: storedAt + ttlMs / 2, expiresAt: storedAt + ttlMs });
      }
      return lookup;
    });
    this.inFlight.set(oaId, started);
    return started;
  }

  private async waitAtMost(pending: Promise<QuotaLookup>): Promise<QuotaLookup> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<QuotaLookup>((resolve) => {
      timer = setTimeout(() => resolve({ figures: null, error: `the platform did not answer the quota lookup within ${this.settings.waitMs} ms` }), this.settings.waitMs);
    });
    try {
      return await Promise.race([pending, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One lookup; never throws: a failure becomes the lookup's `error`. */
  private async ask(oaId: string): Promise<QuotaLookup> {
    const now = this.deps.clock();
    const day = vietnamDay(now);
    try {
      const token = await this.tokens.accessTokenFor(oaId);
      // Our counts before the platform's: a send that lands in between is then counted on both
      // sides (usedElsewhere one too high until the next lookup), never on neither.
      const ours = await readQuotaUsage(this.deps.store.db, { oaId, day, queuedDueBefore: nextVietnamMidnight(now) + TODAYS_RETRIES_MARGIN_MS });
      const answer = await this.deps.platform.getQuota(token);
      if (!answer.ok) {
        if (describePlatformError(answer.code, answer.message).retry === 'refresh_token') this.tokens.reportRejected(oaId, token);
        return this.failed(oaId, `the platform refused the quota lookup: ${answer.code}${answer.message ? ` ${answer.message}` : ''}`);
      }
      const { dailyQuota, remainingQuota } = answer.data;
      // No tier is 0 (docs/zns-platform.md: 500 and up); a 0 or missing figure is an answer we cannot use.
      if (dailyQuota <= 0) return this.failed(oaId, 'the platform answered the quota lookup without a daily quota');
      const usedAtPlatform = Math.max(0, dailyQuota - remainingQuota);
      const oursAtPlatform = ours.reserved - ours.outstanding;
      return { figures: { day, dailyQuota, usedElsewhere: Math.max(0, usedAtPlatform - oursAtPlatform) }, error: null };
    } catch (error) {
      if (error instanceof ReloginRequiredError) return this.failed(oaId, `sender account needs re-login: ${error.reason}`);
      if (error instanceof PlatformUnavailableError) return this.failed(oaId, `the platform is unavailable: ${error.message}`);
      this.deps.log.error({ err: error, oaId }, 'platform quota lookup failed');
      return { figures: null, error: 'the quota lookup failed inside the gateway; see its log' };
    }
  }

  private failed(oaId: string, problem: string): QuotaLookup {
    this.deps.log.warn({ oaId, problem }, 'platform quota lookup failed; the configured daily quota applies');
    return { figures: null, error: problem };
  }
}
