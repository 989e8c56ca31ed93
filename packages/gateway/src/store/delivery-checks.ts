/**
 * SQL of the delivery check: sent messages whose delivery event is overdue, to be asked about at
 * the platform's status endpoint by their provider msg_id (workers/delivery-checks/engine.ts).
 */
import type { Kysely } from 'kysely';
import type { Database, MessageRow } from './schema.ts';

export type MessageAwaitingDelivery = Pick<MessageRow, 'id' | 'oa_id' | 'provider_msg_id'>;

/**
 * Sent messages sent between `sentAfter` and `sentBefore` (oldest first) that were never checked,
 * or last checked before `checkedBefore`. Uses the partial index on sent_at of sent messages.
 */
export async function findMessagesAwaitingDelivery(
  db: Kysely<Database>,
  window: { sentAfter: number; sentBefore: number; checkedBefore: number; limit: number },
): Promise<MessageAwaitingDelivery[]> {
  return db
    .selectFrom('message_states')
    .select(['id', 'oa_id', 'provider_msg_id'])
    .where('status', '=', 'sent')
    .where('sent_at', '>', window.sentAfter)
    .where('sent_at', '<', window.sentBefore)
    .where('provider_msg_id', 'is not', null)
    .where((eb) => eb.or([eb('status_checked_at', 'is', null), eb('status_checked_at', '<', window.checkedBefore)]))
    .orderBy('sent_at')
    .limit(window.limit)
    .execute();
}

/** Notes that these messages were asked about (still sent, or unknown to the platform). */
export async function markStatusChecked(db: Kysely<Database>, ids: string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('message_states').set({ status_checked_at: now }).where('id', 'in', ids).where('status', '=', 'sent').execute();
}
