/**
 * Token buckets per API key, in this process (docs/api.md: 50 requests/s, burst 100 by default).
 * With several API processes each enforces the limit on its own share of the traffic.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(
    private readonly defaults: { perSecond: number; burst: number },
    private readonly clock: () => number,
  ) {}

  /** Takes one token; returns 0 when allowed, else the seconds to wait before retrying. */
  take(key: string, perSecondOverride: number | null): { retryAfterSeconds: number; limit: number; remaining: number } {
    const perSecond = perSecondOverride ?? this.defaults.perSecond;
    // A key's own limit brings its own burst (two seconds' worth, like 50/s with burst 100), so an
    // operator can slow a key below the default burst as well as raise it above.
    const burst = perSecondOverride ? perSecondOverride * 2 : this.defaults.burst;
    const now = this.clock();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { retryAfterSeconds: 0, limit: perSecond, remaining: Math.floor(bucket.tokens) };
    }
    return { retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)), limit: perSecond, remaining: 0 };
  }
}
