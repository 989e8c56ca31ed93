/**
 * The retention sweep: phones, RSA ciphertexts and template data of messages that finished more
 * than TMS_MESSAGE_RETENTION_DAYS ago are erased (store/personal-data.ts says what stays).
 */
import { eraseExpiredPersonalData } from '../store/personal-data.ts';
import type { TaskCaller, VerbCall } from './context.ts';

/** Messages erased per transaction: short enough never to hold acceptance or dispatch back. */
const ERASE_BATCH = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Erases the personal data of every message past its retention, in batches of one transaction
 * each; nothing when retention is off (0 days). Returns how many messages were erased.
 */
export async function erasePersonalDataPastRetention({ ctx }: VerbCall<TaskCaller, Record<string, never>>): Promise<number> {
  const days = ctx.parts.config.messageRetentionDays;
  if (days === 0) return 0;
  const now = ctx.clock();
  const finishedBefore = now - days * DAY_MS;
  let erased = 0;
  for (;;) {
    const batch = await eraseExpiredPersonalData(ctx.store, { finishedBefore, limit: ERASE_BATCH });
    erased += batch;
    if (batch < ERASE_BATCH) return erased;
  }
}
