import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, backoffDelay, parseRetryAfter } from './retry.ts';

describe('retry timing', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
    const now = Date.parse('2026-11-21T08:00:00Z');
    expect(parseRetryAfter('Sat, 21 Nov 2026 08:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Sat, 21 Nov 2026 07:59:00 GMT', now)).toBe(0);
  });

  it('draws each backoff below a ceiling that doubles up to the maximum (full jitter)', () => {
    expect([1, 2, 3].map((retry) => backoffDelay(DEFAULT_RETRY_POLICY, retry, () => 0.999999))).toEqual([300, 600, 1200]);
    expect(backoffDelay(DEFAULT_RETRY_POLICY, 20, () => 0.999999)).toBe(DEFAULT_RETRY_POLICY.maxDelayMs);
    expect(backoffDelay(DEFAULT_RETRY_POLICY, 3, () => 0)).toBe(0);
  });
});
