import { setTimeout as delay } from 'node:timers/promises';

/** Tries before a failed write is given up on. */
const WRITE_ATTEMPTS = 5;
/** The wait after the nth failure is n times this. */
const RETRY_STEP_MS = 100;

/**
 * Runs `write` until it lands, up to 5 tries, waiting a little longer after each failure (a
 * dropped connection, a busy database). For records of something that already happened (a send,
 * a webhook attempt): losing one would make the work happen again. `onRetry` hears of each
 * failure that is tried again; the last failure is thrown.
 */
export async function retryWrite<T>(write: () => Promise<T>, onRetry: (error: unknown, attempt: number) => void): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= WRITE_ATTEMPTS) throw error;
      onRetry(error, attempt);
      await delay(RETRY_STEP_MS * attempt);
    }
  }
}
