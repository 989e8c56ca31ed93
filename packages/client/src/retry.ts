/** Retry timing: exponential backoff with full jitter, and the service's Retry-After. */

export interface RetryPolicy {
  /** Retries after the first attempt (so attempts = maxRetries + 1). */
  maxRetries: number;
  /** First backoff ceiling in ms; doubles per retry. */
  baseDelayMs: number;
  /** Ceiling of any computed backoff. */
  maxDelayMs: number;
  /**
   * Longest Retry-After this client waits for. A longer one (a key limited to a slow rate) ends
   * the call with the 429 instead, so a caller is never blocked for minutes without knowing.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 300, maxDelayMs: 10_000, maxRetryAfterMs: 60_000 };

/**
 * Full jitter (a uniform draw below the exponential ceiling): many clients that failed together do
 * not come back together. `retry` counts from 1.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(random() * ceiling);
}

/** Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3). Null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Waits, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
