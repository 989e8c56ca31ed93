/**
 * Console sign-in throttling: failed attempts are counted per e-mail address and per client
 * address over a window; past the limit, sign-in from there (or to that account) is refused until
 * the window that started with the first failure ends. Counting per account stops guessing one
 * password from many machines; per address, trying many accounts from one machine. A correct
 * password does not get through a closed window, so the answer tells an attacker nothing. Kept in
 * this process (N API processes allow N times the attempts); memory is bounded by evicting the
 * oldest windows.
 */
export interface SignInThrottleLimits {
  readonly windowMs: number;
  readonly failuresPerAccount: number;
  readonly failuresPerAddress: number;
  readonly maxTracked: number;
}

export const SIGN_IN_THROTTLE: SignInThrottleLimits = { windowMs: 15 * 60_000, failuresPerAccount: 5, failuresPerAddress: 30, maxTracked: 50_000 };

interface Window {
  failures: number;
  endsAt: number;
}

export class SignInThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly clock: () => number,
    private readonly limits: SignInThrottleLimits = SIGN_IN_THROTTLE,
  ) {}

  /**
   * Lets an attempt through, or answers the seconds to wait (more than 0). An attempt let through
   * counts as a failure at once, before its password is checked: attempts sent all at once are
   * counted as they arrive, not after their slow checks, so they cannot all slip under the limit.
   */
  admit(email: string, address: string): number {
    const now = this.clock();
    const waits = [this.waitOf(`account:${email}`, this.limits.failuresPerAccount, now), this.waitOf(`address:${address}`, this.limits.failuresPerAddress, now)];
    const wait = Math.ceil(Math.max(...waits) / 1000);
    if (wait > 0) return wait;
    this.count(`account:${email}`, now);
    this.count(`address:${address}`, now);
    return 0;
  }

  /** A successful attempt was no failure: the account's failures are cleared, the address's attempt uncounted. */
  recordSuccess(email: string, address: string): void {
    this.windows.delete(`account:${email}`);
    const window = this.windows.get(`address:${address}`);
    if (window && window.failures > 0) window.failures -= 1;
  }

  private waitOf(key: string, limit: number, now: number): number {
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return 0;
    return window.failures >= limit ? window.endsAt - now : 0;
  }

  private count(key: string, now: number): void {
    const window = this.windows.get(key);
    if (window && window.endsAt > now) {
      window.failures += 1;
      return;
    }
    this.windows.delete(key);
    if (this.windows.size >= this.limits.maxTracked) this.windows.delete(this.windows.keys().next().value as string);
    this.windows.set(key, { failures: 1, endsAt: now + this.limits.windowMs });
  }
}
