import { setTimeout as sleep } from 'node:timers/promises';
import { decryptSecret, encryptSecret } from '../lib/crypto.ts';
import { describePlatformError } from '../platform/error-catalogue.ts';
import { headerValueProblem } from '../platform/header-value.ts';
import { InvalidPlatformRequestError, PlatformUnavailableError, type TokenPair, type ZnsClient, type ZnsResult } from '../platform/zns-client.ts';
import {
  claimTokenRefreshLease,
  markReloginRequired,
  readTokenState,
  releaseTokenRefreshLease,
  storeRefreshedTokens,
  type TokenState,
} from '../store/sender-account-tokens.ts';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { masterKeyRing } from '../config/master-key.ts';
import type { Store } from '../store/database.ts';

/**
 * The OA cannot get an access token until the operator connects it again
 * (PUT /admin/v1/workspaces/:id/sender-accounts/:oa_id). `reason` is what the operator reads as
 * the account's token_problem.
 */
export class ReloginRequiredError extends Error {
  constructor(
    readonly oaId: string,
    readonly reason: string,
  ) {
    super(`sender account ${oaId} must be connected again: ${reason}`);
    this.name = 'ReloginRequiredError';
  }
}

export interface AccessTokenDependencies {
  readonly store: Store;
  readonly clock: () => number;
  readonly config: Config;
  readonly log: Logger;
  readonly platform: ZnsClient;
}

export interface AccessTokenOptions {
  /** Refresh when the access token expires within this; default 10 minutes. */
  refreshMarginMs?: number;
  /** How long one process may hold an OA's refresh lease; default 30 s (more than a platform call may take). */
  leaseMs?: number;
  /** How often a process waiting for another's refresh looks at the row again; default 100 ms. */
  waitStepMs?: number;
}

const DEFAULT_REFRESH_MARGIN_MS = 10 * 60_000;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_WAIT_STEP_MS = 100;
/** Waiting for another process's refresh: its lease plus this (at most one more lease), then give up for now. */
const WAIT_SLACK_MS = 2_000;
/** Storing a freshly issued pair is retried this many times (losing it loses the OA). */
const STORE_ATTEMPTS = 5;
const STORE_RETRY_DELAY_MS = 200;

/**
 * The status an account must have for its tokens to be handed out: connected for every use but
 * one, disconnected for the platform check that comes before connecting it again.
 */
type TokenUse = Extract<TokenState['status'], 'connected' | 'disconnected'>;

interface CachedToken {
  token: string;
  expiresAt: number;
  /** When to stop handing it out and refresh: the margin before expiry (at most half its life). */
  refreshAt: number;
}

/**
 * OAuth v4 access tokens per sender account (docs/zns-platform.md).
 *
 * - `accessTokenFor` answers from an in-process cache, else from the row while the token is not
 *   within `refreshMarginMs` of expiry, else refreshes. Callers in one process share one in-flight
 *   refresh per OA; processes share the row and take turns through a lease (one conditional UPDATE),
 *   the others polling the row until the winner stored the new pair.
 * - Refresh tokens are single-use: the platform's new pair is written to the row in one UPDATE right
 *   after the answer, before the access token is handed to anyone.
 * - A refusal of the refresh token marks the account relogin_required (with the reason in
 *   token_problem) and throws ReloginRequiredError; a transport failure releases the lease and
 *   rethrows PlatformUnavailableError for the caller to retry later.
 */
export class AccessTokens {
  private readonly cache = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<string>>();
  /** Tokens the platform refused (reportRejected): never handed out again, even if still in the row. */
  private readonly rejected = new Map<string, string>();
  private readonly refreshMarginMs: number;
  private readonly leaseMs: number;
  private readonly waitStepMs: number;

  constructor(
    private readonly deps: AccessTokenDependencies,
    options: AccessTokenOptions = {},
  ) {
    this.refreshMarginMs = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.waitStepMs = Math.max(1, options.waitStepMs ?? DEFAULT_WAIT_STEP_MS);
  }

  /**
   * The longest accessTokenFor waits on another process's refresh before it gives up for now (its
   * own refresh adds one platform call, bounded by the platform deadline).
   */
  get longestWaitMs(): number {
    return this.leaseMs + Math.min(WAIT_SLACK_MS, this.leaseMs);
  }

  /** A usable access token of the OA. Throws ReloginRequiredError or PlatformUnavailableError. */
  async accessTokenFor(oaId: string): Promise<string> {
    const cached = this.cache.get(oaId);
    if (cached && cached.refreshAt > this.deps.clock()) return cached.token;
    let pending = this.inFlight.get(oaId);
    if (!pending) {
      pending = this.obtain(oaId).finally(() => this.inFlight.delete(oaId));
      this.inFlight.set(oaId, pending);
    }
    return pending;
  }

  /**
   * An access token of a disconnected account, for the platform check before it is connected again
   * (services/admin/sender-accounts.ts): the row, lease and refresh of accessTokenFor, so a spent
   * refresh token is stored all the same, but never cached or shared, so nothing else in the
   * process sends with it. Throws ReloginRequiredError (the refresh token was refused, or the
   * account is no longer disconnected) or PlatformUnavailableError.
   */
  async accessTokenWhileDisconnected(oaId: string): Promise<string> {
    // A token cached while the account was connected may no longer be the row's: left in place, it
    // would make reportRejected ignore the platform refusing the row's token, and the check would
    // be handed that refused token again.
    this.forget(oaId);
    return this.obtain(oaId, 'disconnected');
  }

  /**
   * The tokens of a disconnected account in the shape callAsAccount takes, for the platform check
   * before it is connected again: accessTokenWhileDisconnected stands in for accessTokenFor.
   */
  whileDisconnected(): Pick<AccessTokens, 'accessTokenFor' | 'reportRejected'> {
    return {
      accessTokenFor: (oaId) => this.accessTokenWhileDisconnected(oaId),
      reportRejected: (oaId, token) => this.reportRejected(oaId, token),
    };
  }

  /**
   * Drops the OA's cached access token, so the next use reads the row: the operator disconnected
   * the account or connected it with new credentials, and the cached token speaks for neither.
   */
  forget(oaId: string): void {
    this.cache.delete(oaId);
  }

  /**
   * The platform refused `token` (-124, -216, -220): forget it so the next accessTokenFor refreshes.
   * A token that is no longer the cached one (already replaced) is ignored.
   */
  reportRejected(oaId: string, token: string): void {
    const cached = this.cache.get(oaId);
    if (cached && cached.token !== token) return;
    this.cache.delete(oaId);
    this.rejected.set(oaId, token);
  }

  private isFresh(expiresAt: number | null): expiresAt is number {
    return expiresAt !== null && expiresAt - this.refreshMarginMs > this.deps.clock();
  }

  /** The current key first (it encrypts), then the previous one during a rotation (read only). */
  private masterKeys(): readonly Buffer[] {
    const keys = masterKeyRing(this.deps.config);
    if (!keys) throw new Error('TMS_MASTER_KEY is not configured: sender account tokens cannot be read');
    return keys;
  }

  /** The row's access token if it can be used as it is. */
  private usableStoredToken(row: TokenState): CachedToken | null {
    if (row.encrypted_access_token === null || !this.isFresh(row.access_token_expires_at)) return null;
    const token = decryptSecret(row.encrypted_access_token, this.masterKeys());
    if (this.rejected.get(row.oa_id) === token) return null;
    // A token that cannot travel as a header is no token: refresh instead of failing every call.
    if (headerValueProblem(token) !== null) return null;
    return { token, expiresAt: row.access_token_expires_at, refreshAt: row.access_token_expires_at - this.refreshMarginMs };
  }

  private use(oaId: string, usable: CachedToken, use: TokenUse): string {
    if (use === 'connected') this.cache.set(oaId, usable);
    this.rejected.delete(oaId);
    return usable.token;
  }

  private notConnected(oaId: string, row: TokenState | undefined): ReloginRequiredError {
    this.cache.delete(oaId);
    if (!row) return new ReloginRequiredError(oaId, 'the sender account is not connected');
    if (row.status === 'disconnected') return new ReloginRequiredError(oaId, row.token_problem ?? 'the sender account is disconnected');
    return new ReloginRequiredError(oaId, row.token_problem ?? 'the sender account must be authorised again');
  }

  /**
   * Row → (lease → refresh) loop. Each turn: a usable stored token wins; else try to claim the lease;
   * a lost claim means another process is refreshing, so wait a step and look again. The wait is
   * bounded by about one lease: a holder that crashed loses its lease by then and we claim it.
   */
  private async obtain(oaId: string, use: TokenUse = 'connected'): Promise<string> {
    const waitBoundMs = this.longestWaitMs;
    const maxTurns = Math.ceil(waitBoundMs / this.waitStepMs) + 1;
    for (let turn = 0; turn < maxTurns; turn += 1) {
      if (turn > 0) await sleep(this.waitStepMs);
      const row = await readTokenState(this.deps.store.db, oaId);
      if (!row || row.status !== use) throw this.notConnected(oaId, row);
      const stored = this.usableStoredToken(row);
      if (stored) return this.use(oaId, stored, use);

      const now = this.deps.clock();
      const leaseUntil = now + this.leaseMs;
      const claimed = await claimTokenRefreshLease(this.deps.store.db, oaId, { now, until: leaseUntil, status: use });
      if (!claimed) continue;
      // Someone may have stored a fresh pair between our read and our claim: use it, keep the refresh token.
      const storedMeanwhile = this.usableStoredToken(claimed);
      if (storedMeanwhile) {
        await releaseTokenRefreshLease(this.deps.store.db, oaId, leaseUntil);
        return this.use(oaId, storedMeanwhile, use);
      }
      const refreshed = await this.refresh(claimed, leaseUntil, use);
      if (refreshed !== null) return refreshed;
      // The refusal was for a refresh token that is no longer the row's: look again.
    }
    throw new PlatformUnavailableError(`token refresh of sender account ${oaId} by another process did not finish within ${waitBoundMs} ms`);
  }

  /**
   * Spends the claimed row's refresh token. Returns the new access token, or null when the platform
   * refused a refresh token that the row no longer holds (someone else refreshed meanwhile).
   */
  private async refresh(row: TokenState, leaseUntil: number, use: TokenUse): Promise<string | null> {
    const { db } = this.deps.store;
    const key = this.masterKeys();
    const oaId = row.oa_id;
    const startedAt = this.deps.clock();
    let answer: ZnsResult<TokenPair>;
    try {
      answer = await this.deps.platform.refreshAccessToken({
        appId: row.app_id,
        appSecret: decryptSecret(row.encrypted_app_secret, key),
        refreshToken: decryptSecret(row.encrypted_refresh_token, key),
      });
    } catch (error) {
      if (error instanceof InvalidPlatformRequestError) return this.unusableCredentials(row, leaseUntil, error);
      await this.releaseQuietly(oaId, leaseUntil);
      throw error;
    }

    if (answer.ok) {
      // THE ONE UNAVOIDABLE WINDOW: from here until storeRefreshedTokens commits, the only valid
      // refresh token of this OA exists solely in this process's memory (the platform has already
      // killed the one in the row). A crash in between leaves the row with a dead refresh token and
      // the next refresh marks the OA relogin_required. Nothing else happens before the write (no
      // other I/O, the token is not handed out), and the write is one UPDATE, retried a few times
      // on a database error, so the window is one round trip to the database.
      return this.storeAndUse(oaId, answer.data, startedAt, use);
    }

    const entry = describePlatformError(answer.code, answer.message);
    if (entry.retry === 'backoff') {
      // "Unknown error, try again later" or a rate limit: the refresh token was not necessarily spent.
      await this.releaseQuietly(oaId, leaseUntil);
      throw new PlatformUnavailableError(`token refresh of sender account ${oaId} failed for now: ${answer.code} ${answer.message}`);
    }
    const problem = `The platform refused the refresh token (${answer.code}${answer.message ? `: ${answer.message}` : ''}); connect the sender account again with a new refresh token.`;
    const marked = await markReloginRequired(db, oaId, { refusedEncryptedRefreshToken: row.encrypted_refresh_token, problem, now: this.deps.clock() });
    if (!marked) {
      await this.releaseQuietly(oaId, leaseUntil);
      return null;
    }
    this.cache.delete(oaId);
    this.deps.log.warn({ oaId, code: answer.code }, 'sender account needs the operator: refresh token refused');
    throw new ReloginRequiredError(oaId, problem);
  }

  /**
   * The row's app secret cannot be sent to the platform at all (stored before the operator verbs
   * checked it): no refresh can ever work, so the account needs the operator, like a refused
   * refresh token. Returns null when the row changed meanwhile (the operator connected it again).
   */
  private async unusableCredentials(row: TokenState, leaseUntil: number, error: InvalidPlatformRequestError): Promise<null> {
    const oaId = row.oa_id;
    const problem = `The stored credentials cannot be sent to the platform (${error.message}); connect the sender account again with the right app secret.`;
    const marked = await markReloginRequired(this.deps.store.db, oaId, { refusedEncryptedRefreshToken: row.encrypted_refresh_token, problem, now: this.deps.clock() });
    if (!marked) {
      await this.releaseQuietly(oaId, leaseUntil);
      return null;
    }
    this.cache.delete(oaId);
    this.deps.log.error({ oaId, header: error.header }, 'sender account needs the operator: its stored credentials are not valid HTTP header values');
    throw new ReloginRequiredError(oaId, problem);
  }

  private async storeAndUse(oaId: string, pair: TokenPair, startedAt: number, use: TokenUse): Promise<string> {
    const key = this.masterKeys();
    const tokens = {
      encryptedRefreshToken: encryptSecret(pair.refreshToken, key),
      encryptedAccessToken: encryptSecret(pair.accessToken, key),
      // Counted from before the request: the token is never believed to live longer than it does.
      accessTokenExpiresAt: startedAt + pair.expiresInSeconds * 1000,
      now: this.deps.clock(),
    };
    let status: TokenState['status'] | undefined;
    for (let attempt = 1; ; attempt += 1) {
      try {
        status = await storeRefreshedTokens(this.deps.store.db, oaId, tokens);
        break;
      } catch (error) {
        if (attempt >= STORE_ATTEMPTS) {
          this.deps.log.error({ oaId, err: error }, 'could not store the refreshed tokens: the sender account will need the operator');
          throw error;
        }
        await sleep(STORE_RETRY_DELAY_MS * attempt);
      }
    }
    if (status !== use) {
      this.cache.delete(oaId);
      throw status === undefined ? this.notConnected(oaId, undefined) : new ReloginRequiredError(oaId, `the sender account is ${status}`);
    }
    this.deps.log.info({ oaId, expiresAt: tokens.accessTokenExpiresAt }, 'sender account access token refreshed');
    const tokenProblem = headerValueProblem(pair.accessToken);
    // Stored all the same: the refresh token in the pair is the only valid one now.
    if (tokenProblem) throw new PlatformUnavailableError(`the platform issued an access token for sender account ${oaId} that cannot be sent back to it: it ${tokenProblem}`);
    // A token that lives less than twice the margin (short lifetimes in test set-ups) is refreshed at
    // half its life rather than on every call.
    const marginMs = Math.min(this.refreshMarginMs, (pair.expiresInSeconds * 1000) / 2);
    return this.use(oaId, { token: pair.accessToken, expiresAt: tokens.accessTokenExpiresAt, refreshAt: tokens.accessTokenExpiresAt - marginMs }, use);
  }

  private async releaseQuietly(oaId: string, leaseUntil: number): Promise<void> {
    try {
      await releaseTokenRefreshLease(this.deps.store.db, oaId, leaseUntil);
    } catch (error) {
      // The lease runs out by itself; the original failure is what the caller needs to see.
      this.deps.log.warn({ oaId, err: error }, 'could not release the token refresh lease');
    }
  }
}
