import { sql } from 'kysely';
import { runInTransaction, type Store, type Transaction } from './database.ts';
import { refundMessage } from './messages.ts';
import type { MessageRow } from './schema.ts';

export type ClaimedMessage = Pick<
  MessageRow,
  'id' | 'workspace_id' | 'oa_id' | 'template_id' | 'mode' | 'phone' | 'rsa_phone' | 'template_data' | 'attempts' | 'price' | 'quota_day' | 'lease_expires_at' | 'due_at'
>;

const CLAIMED_COLUMNS = 'id, workspace_id, oa_id, template_id, mode, phone, rsa_phone, template_data, attempts, price, quota_day, lease_expires_at, due_at';

/**
 * Claims due queued messages for one worker: status sending, a lease, one more attempt. PostgreSQL
 * skips rows another worker holds (SKIP LOCKED); SQLite's write lock serialises the claim.
 */
export async function claimDueMessages(store: Store, input: { now: number; limit: number; leaseMs: number }): Promise<ClaimedMessage[]> {
  const lock = store.dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const leaseUntil = input.now + input.leaseMs;
  return runInTransaction(store, async (trx) => {
    const result = await sql<ClaimedMessage>`
      UPDATE messages
      SET status = 'sending', lease_expires_at = ${leaseUntil}, attempts = attempts + 1, updated_at = ${input.now}
      WHERE id IN (
        SELECT id FROM messages WHERE status = 'queued' AND due_at <= ${input.now} ORDER BY due_at LIMIT ${input.limit} ${lock}
      )
      RETURNING ${sql.raw(CLAIMED_COLUMNS)}`.execute(trx);
    return result.rows;
  });
}

export type DispatchOutcome =
  | { kind: 'sent'; message: ClaimedMessage; providerMsgId: string; sentAt: number }
  | { kind: 'failed'; message: ClaimedMessage; code: number; errorMessage: string; reason: string }
  | { kind: 'retry'; message: ClaimedMessage; dueAt: number };


async function recordSent(trx: Transaction, sent: Extract<DispatchOutcome, { kind: 'sent' }>[], now: number): Promise<void> {
  if (sent.length === 0) return;
  // One statement for the whole round: CASE picks each row's platform id and time.
  const providerIds = sql.join(sent.map((outcome) => sql`WHEN ${outcome.message.id} THEN CAST(${outcome.providerMsgId} AS text)`), sql` `);
  const sentTimes = sql.join(sent.map((outcome) => sql`WHEN ${outcome.message.id} THEN CAST(${outcome.sentAt} AS bigint)`), sql` `);
  const claims = sql.join(
    sent.map((outcome) => sql`(id = ${outcome.message.id} AND lease_expires_at = ${outcome.message.lease_expires_at})`),
    sql` OR `,
  );
  await sql`
    UPDATE messages
    SET status = 'sent', provider_msg_id = CASE id ${providerIds} END, sent_at = CASE id ${sentTimes} END,
        lease_expires_at = NULL, rsa_phone = NULL, updated_at = ${now}
    WHERE status = 'sending' AND (${claims})`.execute(trx);
  // A delivery event can beat this record: that message is already delivered, but sent when we sent it.
  const ids = sent.map((outcome) => outcome.message.id);
  await sql`
    UPDATE messages SET sent_at = CASE id ${sentTimes} END, provider_msg_id = COALESCE(provider_msg_id, CASE id ${providerIds} END)
    WHERE status = 'delivered' AND sent_at IS NULL AND id IN (${sql.join(ids)})`.execute(trx);
}

/**
 * Records a round's outcomes in one transaction: sent (with the platform's id; the RSA ciphertext
 * is erased), failed (codes and reasons, refunded, quota released) or back to queued for a retry.
 */
export async function recordDispatchOutcomes(store: Store, outcomes: DispatchOutcome[], now: number): Promise<void> {
  if (outcomes.length === 0) return;
  await runInTransaction(store, async (trx) => {
    await recordSent(
      trx,
      outcomes.filter((outcome): outcome is Extract<DispatchOutcome, { kind: 'sent' }> => outcome.kind === 'sent'),
      now,
    );
    for (const outcome of outcomes) {
      const { message } = outcome;
      if (outcome.kind === 'retry') {
        await trx
          .updateTable('messages')
          .set({ status: 'queued', due_at: outcome.dueAt, lease_expires_at: null, updated_at: now })
          .where('id', '=', message.id)
          .where('status', '=', 'sending')
          .where('lease_expires_at', '=', message.lease_expires_at)
          .execute();
      } else if (outcome.kind === 'failed') {
        const failed = await trx
          .updateTable('messages')
          .set({
            status: 'failed',
            error_code: outcome.code,
            error_message: outcome.errorMessage,
            error_reason: outcome.reason,
            failed_at: now,
            lease_expires_at: null,
            rsa_phone: null,
            updated_at: now,
          })
          .where('id', '=', message.id)
          .where('status', '=', 'sending')
          .where('lease_expires_at', '=', message.lease_expires_at)
          .returning(['id', 'workspace_id', 'price', 'oa_id', 'quota_day'])
          .executeTakeFirst();
        if (failed) await refundMessage(trx, failed, now);
      }
    }
  });
}

/**
 * The reconciler: messages whose claim expired (their worker died mid-round) go back to the queue.
 * Delivery events still mark such a message delivered if the platform had taken it; a platform
 * status lookup before resending needs the provider id, which a claim that died has not recorded.
 */
export async function requeueExpiredClaims(store: Store, now: number, limit: number): Promise<string[]> {
  return runInTransaction(store, async (trx) => {
    const expired = await trx
      .selectFrom('messages')
      .select('id')
      .where('status', '=', 'sending')
      .where('lease_expires_at', '<', now)
      .orderBy('lease_expires_at')
      .limit(limit)
      .execute();
    if (expired.length === 0) return [];
    const ids = expired.map((row) => row.id);
    await trx
      .updateTable('messages')
      .set({ status: 'queued', due_at: now, lease_expires_at: null, updated_at: now })
      .where('id', 'in', ids)
      .where('status', '=', 'sending')
      .where('lease_expires_at', '<', now)
      .execute();
    return ids;
  });
}
