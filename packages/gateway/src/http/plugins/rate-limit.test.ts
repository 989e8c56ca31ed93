import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limit.ts';

/** A simulated clock the tests move by hand. */
function simulatedClock() {
  let now = 1_700_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/** The same token buckets, never forgetting one: what the bounded limiter must be indistinguishable from. */
class UnboundedReference {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();
  constructor(
    private readonly defaults: { perSecond: number; burst: number },
    private readonly clock: () => number,
  ) {}

  allows(key: string, perSecondOverride: number | null): boolean {
    const perSecond = perSecondOverride ?? this.defaults.perSecond;
    const burst = perSecondOverride ? perSecondOverride * 2 : this.defaults.burst;
    const now = this.clock();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

describe('RateLimiter', () => {
  it('lets a burst through, then answers the seconds to wait; a key of its own limit has twice that as burst', () => {
    const clock = simulatedClock();
    const limiter = new RateLimiter({ perSecond: 2, burst: 3 }, clock.now);
    expect([1, 2, 3].map(() => limiter.take('key_a', null).retryAfterSeconds)).toEqual([0, 0, 0]);
    expect(limiter.take('key_a', null)).toEqual({ retryAfterSeconds: 1, limit: 2, remaining: 0 });
    clock.advance(500);
    expect(limiter.take('key_a', null)).toEqual({ retryAfterSeconds: 0, limit: 2, remaining: 0 });
    expect(Array.from({ length: 11 }, () => limiter.take('key_b', 5).retryAfterSeconds).filter((wait) => wait === 0)).toHaveLength(10);
  });

  it('forgets idle keys, so many keys over time take no more memory than the keys active within a refill time', () => {
    const clock = simulatedClock();
    // Refill time 2 s (100 tokens at 50/s); 2,000 new keys a second for 10 simulated minutes.
    const limiter = new RateLimiter({ perSecond: 50, burst: 100 }, clock.now);
    let peak = 0;
    for (let step = 0; step < 60_000; step += 1) {
      for (let index = 0; index < 20; index += 1) limiter.take(`key_${step}_${index}`, null);
      peak = Math.max(peak, limiter.trackedKeys);
      clock.advance(10);
    }
    // Keys of the last 2 s (plus the step that has not refilled yet), not the 1,200,000 seen.
    expect(peak).toBeLessThanOrEqual(2_020);
    clock.advance(2_000);
    limiter.take('key_last', null);
    expect(limiter.trackedKeys).toBe(1);
  });

  it('never tracks more keys than its cap; a new key waits rather than a refilling bucket being dropped', () => {
    const clock = simulatedClock();
    const limiter = new RateLimiter({ perSecond: 50, burst: 100 }, clock.now, 3);
    for (const key of ['key_a', 'key_b', 'key_c']) for (let index = 0; index < 100; index += 1) limiter.take(key, null);
    expect(limiter.take('key_d', null)).toEqual({ retryAfterSeconds: 2, limit: 50, remaining: 0 });
    expect(limiter.trackedKeys).toBe(3);
    // key_a had spent its burst: still refilling, so it is still held to its rate.
    expect(limiter.take('key_a', null).retryAfterSeconds).toBe(1);
    clock.advance(1_000);
    expect(limiter.take('key_d', null).retryAfterSeconds).toBe(1);
    expect(limiter.take('key_a', null).retryAfterSeconds).toBe(0);
    clock.advance(1_000);
    // key_b and key_c have refilled and make room; key_a, used a second ago, has not and stays.
    expect(limiter.take('key_d', null).retryAfterSeconds).toBe(0);
    expect(limiter.trackedKeys).toBe(2);
  });

  it('is indistinguishable from buckets that are never forgotten (eviction only drops full buckets)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 })) }), { maxLength: 400 }),
        (requests) => {
          const clock = simulatedClock();
          const defaults = { perSecond: 3, burst: 4 };
          const limiter = new RateLimiter(defaults, clock.now);
          const reference = new UnboundedReference(defaults, clock.now);
          for (const { key, advanceMs } of requests) {
            clock.advance(advanceMs);
            // Keys 0 and 1 have their own limit (1/s, burst 2): buckets with different refill times.
            const override = key < 2 ? 1 : null;
            const allowed = limiter.take(`key_${key}`, override).retryAfterSeconds === 0;
            expect(allowed).toBe(reference.allows(`key_${key}`, override));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('at its cap, never lets a key exceed its rate over any window', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 7 }), advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_500 })) }), { maxLength: 300 }),
        (requests) => {
          const clock = simulatedClock();
          const limiter = new RateLimiter({ perSecond: 5, burst: 10 }, clock.now, 3);
          const allowedAt = new Map<number, number[]>();
          for (const { key, advanceMs } of requests) {
            clock.advance(advanceMs);
            const override = key < 2 ? 1 : null;
            if (limiter.take(`key_${key}`, override).retryAfterSeconds === 0) allowedAt.set(key, [...(allowedAt.get(key) ?? []), clock.now()]);
            expect(limiter.trackedKeys).toBeLessThanOrEqual(3);
          }
          for (const [key, times] of allowedAt) {
            const [perSecond, burst] = key < 2 ? [1, 2] : [5, 10];
            // A token bucket that starts full lets at most burst + rate × duration through in any window.
            for (let first = 0; first < times.length; first += 1) {
              for (let last = first; last < times.length; last += 1) {
                const seconds = (times[last]! - times[first]!) / 1000;
                expect(last - first + 1).toBeLessThanOrEqual(burst + perSecond * seconds + 1e-9);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
