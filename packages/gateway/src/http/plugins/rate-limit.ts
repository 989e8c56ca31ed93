/**
 * Token buckets per API key, in this process (docs/api.md: 50 requests/s, burst 100 by default).
 * Each API process enforces the limit on its own, so N processes let a key through at up to N
 * times its rate.
 *
 * Memory stays bounded without ever letting a key past its rate: a bucket is forgotten only once
 * it has refilled, when a fresh one would be identical, and at most `maxKeys` are kept. The map is
 * in order of last use, so the buckets idle longest (the first to refill) are at its front and
 * each take() sweeps them away for the cost of the ones it removes. If every kept bucket is still refilling
 * when a new key arrives at the cap, that key waits (429) rather than a bucket being dropped early.
 */
interface Bucket {
  tokens: number;
  updatedAt: number;
  perSecond: number;
  burst: number;
}

export interface RateDecision {
  /** 0 when allowed, else the seconds to wait before retrying. */
  retryAfterSeconds: number;
  limit: number;
  remaining: number;
}

/** Keys tracked at most; far more than can be active within a refill time (2 s by default) on one process. */
export const RATE_LIMIT_MAX_KEYS = 50_000;

/** Tokens in the bucket at `now`; the one formula both the refill and the eviction use. */
function refilled(bucket: Bucket, now: number): number {
  return Math.min(bucket.burst, bucket.tokens + (Math.max(0, now - bucket.updatedAt) / 1000) * bucket.perSecond);
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** The key of the bucket at the end of the map (when it is still there). */
  private mostRecentKey: string | null = null;

  constructor(
    private readonly defaults: { perSecond: number; burst: number },
    private readonly clock: () => number,
    private readonly maxKeys = RATE_LIMIT_MAX_KEYS,
  ) {}

  /** Keys with a bucket in memory now. */
  get trackedKeys(): number {
    return this.buckets.size;
  }

  /** Takes one token for the key. */
  take(key: string, perSecondOverride: number | null): RateDecision {
    const perSecond = perSecondOverride ?? this.defaults.perSecond;
    // A key's own limit brings its own burst (two seconds' worth, like 50/s with burst 100), so an
    // operator can slow a key below the default burst as well as raise it above.
    const burst = perSecondOverride ? perSecondOverride * 2 : this.defaults.burst;
    const now = this.clock();
    this.evictRefilled(now);
    const known = this.buckets.get(key);
    if (!known && this.buckets.size >= this.maxKeys) return this.refuseAtCapacity(now, perSecond);
    const bucket = known ?? { tokens: burst, updatedAt: now, perSecond, burst };
    bucket.perSecond = perSecond;
    bucket.burst = burst;
    bucket.tokens = refilled(bucket, now);
    bucket.updatedAt = now;
    // Re-inserted so the map stays in order of last use, unless it is the last used already. A
    // delete and set per request makes V8 rebuild the map's table every few requests, and a table
    // that has grown old is rebuilt in the old generation: garbage for a full collection.
    if (!known) this.buckets.set(key, bucket);
    else if (this.mostRecentKey !== key) {
      this.buckets.delete(key);
      this.buckets.set(key, bucket);
    }
    this.mostRecentKey = key;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { retryAfterSeconds: 0, limit: perSecond, remaining: Math.floor(bucket.tokens) };
    }
    return { retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)), limit: perSecond, remaining: 0 };
  }

  /** Drops the least recently used buckets that are full again, stopping at the first that is not. */
  private evictRefilled(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (refilled(bucket, now) < bucket.burst) return;
      this.buckets.delete(key);
    }
  }

  /** A new key while every tracked bucket is still refilling: wait until the oldest one is full. */
  private refuseAtCapacity(now: number, perSecond: number): RateDecision {
    const oldest = this.buckets.values().next().value as Bucket;
    const secondsToFull = (oldest.burst - refilled(oldest, now)) / oldest.perSecond;
    return { retryAfterSeconds: Math.max(1, Math.ceil(secondsToFull)), limit: perSecond, remaining: 0 };
  }
}
