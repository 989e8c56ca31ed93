import { sql, type ExpressionBuilder } from 'kysely';
import { runInTransaction, type Store, type Transaction } from './database.ts';
import { refundMessages, type RefundableMessage } from './acceptances.ts';
import type { Database, MessageRow } from './schema.ts';

export type ClaimedMessage = Pick<
  MessageRow,
  'id' | 'workspace_id' | 'oa_id' | 'template_id' | 'mode' | 'phone' | 'rsa_phone' | 'template_data' | 'attempts' | 'price' | 'quota_day' | 'lease_expires_at' | 'due_at'
>;

const CLAIMED_COLUMNS = 'id, workspace_id, oa_id, template_id, mode, phone, rsa_phone, template_data, attempts, price, quota_day, lease_expires_at, due_at';

/**
 * Claims due queued messages for one worker: status sending, a lease, one more attempt. PostgreSQL
 * skips rows another worker holds (SKIP LOCKED); SQLite's write lock serialises the claim.
 * Messages of `skipAccounts` (sender accounts this worker cannot take more of right now) are left
 * for later or for other workers.
 */
export async function claimDueMessages(
  store: Store,
  input: { now: number; limit: number; leaseMs: number; skipAccounts?: readonly string[] },
): Promise<ClaimedMessage[]> {
  const lock = store.dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const leaseUntil = input.now + input.leaseMs;
  const skip = input.skipAccounts?.length ? sql`AND oa_id NOT IN (${sql.join([...input.skipAccounts])})` : sql``;
  return runInTransaction(store, async (trx) => {
    const result = await sql<ClaimedMessage>`
      UPDATE messages
      SET status = 'sending', lease_expires_at = ${leaseUntil}, unconfirmed_since = NULL, attempts = attempts + 1, updated_at = ${input.now}
      WHERE id IN (
        SELECT id FROM messages WHERE status = 'queued' AND due_at <= ${input.now} ${skip} ORDER BY due_at LIMIT ${input.limit} ${lock}
      )
      RETURNING ${sql.raw(CLAIMED_COLUMNS)}`.execute(trx);
    return result.rows;
  });
}

export type DispatchOutcome =
  | { kind: 'sent'; message: ClaimedMessage; providerMsgId: string; sentAt: number }
  | { kind: 'failed'; message: ClaimedMessage; code: number; errorMessage: string; reason: string }
  | { kind: 'retry'; message: ClaimedMessage; dueAt: number }
  /**
   * The send was written and no answer said what the platform did (a timeout, a connection lost
   * after writing): it stays sending, unconfirmed, until `waitUntil`, exactly like a dead
   * worker's claim (reconcileExpiredClaims), so only a trace or the end of that wait decides.
   */
  | { kind: 'unconfirmed'; message: ClaimedMessage; waitUntil: number }
  /** Never attempted (the worker is stopping, or the account is paused): queued again, the attempt given back. */
  | { kind: 'released'; message: ClaimedMessage; dueAt: number };


/**
 * Our claim on a message still stands: the lease we took, or a lease the reconciler extended while
 * the outcome was unknown (a slow round that outlived its lease). Nobody else can have claimed an
 * unconfirmed message, since claims take queued rows only, so its late outcome is the truth.
 */
function claimStillHeld(message: ClaimedMessage) {
  return (eb: ExpressionBuilder<Database, 'messages'>) =>
    eb.or([eb('lease_expires_at', '=', message.lease_expires_at), eb('unconfirmed_since', 'is not', null)]);
}

type SentOutcome = Extract<DispatchOutcome, { kind: 'sent' }>;

/** 7 bound values per message: 1,000 keeps a statement far under SQLite's 32,766. */
const SENT_PER_STATEMENT = 1000;

async function recordSent(trx: Transaction, sent: SentOutcome[], now: number): Promise<void> {
  for (let start = 0; start < sent.length; start += SENT_PER_STATEMENT) await recordSentChunk(trx, sent.slice(start, start + SENT_PER_STATEMENT), now);
}

async function recordSentChunk(trx: Transaction, sent: SentOutcome[], now: number): Promise<void> {
  if (sent.length === 0) return;
  // One statement for the whole round: CASE picks each row's platform id and time.
  const providerIds = sql.join(sent.map((outcome) => sql`WHEN ${outcome.message.id} THEN CAST(${outcome.providerMsgId} AS text)`), sql` `);
  const sentTimes = sql.join(sent.map((outcome) => sql`WHEN ${outcome.message.id} THEN CAST(${outcome.sentAt} AS bigint)`), sql` `);
  const leases = sql.join(sent.map((outcome) => sql`WHEN ${outcome.message.id} THEN CAST(${outcome.message.lease_expires_at} AS bigint)`), sql` `);
  const ids = sent.map((outcome) => outcome.message.id);
  // The same test as claimStillHeld, per row.
  await sql`
    UPDATE messages
    SET status = 'sent', provider_msg_id = CASE id ${providerIds} END, sent_at = CASE id ${sentTimes} END,
        lease_expires_at = NULL, rsa_phone = NULL, updated_at = ${now}
    WHERE status = 'sending' AND id IN (${sql.join(ids)})
      AND (lease_expires_at = CASE id ${leases} END OR unconfirmed_since IS NOT NULL)`.execute(trx);
  // A delivery event can beat this record: that message is already delivered, but sent when we sent it.
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
      outcomes.filter((outcome): outcome is SentOutcome => outcome.kind === 'sent'),
      now,
    );
    // Every message row first, the refunds' quota rows and wallets after: the lock order of acceptances.ts.
    const refunds: RefundableMessage[] = [];
    for (const outcome of outcomes) {
      const { message } = outcome;
      if (outcome.kind === 'retry') {
        await trx
          .updateTable('messages')
          .set({ status: 'queued', due_at: outcome.dueAt, lease_expires_at: null, unconfirmed_since: null, updated_at: now })
          .where('id', '=', message.id)
          .where('status', '=', 'sending')
          .where(claimStillHeld(message))
          .execute();
      } else if (outcome.kind === 'released') {
        await trx
          .updateTable('messages')
          .set((eb) => ({ status: 'queued', due_at: outcome.dueAt, attempts: eb('attempts', '-', 1), lease_expires_at: null, unconfirmed_since: null, updated_at: now }))
          .where('id', '=', message.id)
          .where('status', '=', 'sending')
          .where(claimStillHeld(message))
          .execute();
      } else if (outcome.kind === 'unconfirmed') {
        await trx
          .updateTable('messages')
          .set({ unconfirmed_since: now, lease_expires_at: outcome.waitUntil, updated_at: now })
          .where('id', '=', message.id)
          .where('status', '=', 'sending')
          .where(claimStillHeld(message))
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
          .where(claimStillHeld(message))
          .returning(['id', 'workspace_id', 'price', 'oa_id', 'quota_day'])
          .executeTakeFirst();
        if (failed) refunds.push(failed);
      }
    }
    await refundMessages(trx, refunds, now);
  });
}

export interface ReconciledClaims {
  /** Claims just found expired: now unconfirmed, waiting for a trace of the send. */
  unconfirmed: string[];
  /** Unconfirmed past the grace period with no trace: back in the queue to be sent again. */
  requeued: string[];
  /** Unconfirmed past the grace period with no trace and no attempt left: failed and refunded. */
  failed: string[];
}

/** What a message that ran out of attempts while unconfirmed fails with. */
export interface ExhaustedFailure {
  code: number;
  message: string;
  reason: string;
}

/**
 * The reconciler, for claims whose worker died mid-round and for sends whose outcome was unknown
 * (recorded as unconfirmed by a live worker). The platform may have taken such a send, and its
 * status endpoint needs the platform's msg_id, which was never recorded. So the first expiry only
 * marks the message unconfirmed and extends its lease by the grace period: a delivery event,
 * matched by tracking_id, marks it delivered meanwhile. A message still sending and unconfirmed
 * when that lease expires left no trace: it is requeued, or, when it has used `maxAttempts`, it
 * fails and is refunded (it is never sent a time more than its attempts allow).
 */
export async function reconcileExpiredClaims(
  store: Store,
  input: { now: number; limit: number; graceMs: number; maxAttempts: number; exhausted: ExhaustedFailure },
): Promise<ReconciledClaims> {
  const { now, limit } = input;
  return runInTransaction(store, async (trx) => {
    const expired = await trx
      .selectFrom('messages')
      .select(['id', 'unconfirmed_since', 'attempts'])
      .where('status', '=', 'sending')
      .where('lease_expires_at', '<', now)
      .orderBy('lease_expires_at')
      .limit(limit)
      .execute();
    const unconfirmed = expired.filter((row) => row.unconfirmed_since === null).map((row) => row.id);
    const traceless = expired.filter((row) => row.unconfirmed_since !== null);
    const requeued = traceless.filter((row) => row.attempts < input.maxAttempts).map((row) => row.id);
    const exhausted = traceless.filter((row) => row.attempts >= input.maxAttempts).map((row) => row.id);
    if (unconfirmed.length > 0) {
      await trx
        .updateTable('messages')
        .set({ unconfirmed_since: now, lease_expires_at: now + input.graceMs, updated_at: now })
        .where('id', 'in', unconfirmed)
        .where('status', '=', 'sending')
        .where('unconfirmed_since', 'is', null)
        .where('lease_expires_at', '<', now)
        .execute();
    }
    if (requeued.length > 0) {
      await trx
        .updateTable('messages')
        .set({ status: 'queued', due_at: now, lease_expires_at: null, unconfirmed_since: null, updated_at: now })
        .where('id', 'in', requeued)
        .where('status', '=', 'sending')
        .where('unconfirmed_since', 'is not', null)
        .where('lease_expires_at', '<', now)
        .execute();
    }
    const failed: string[] = [];
    if (exhausted.length > 0) {
      const rows = await trx
        .updateTable('messages')
        .set({
          status: 'failed',
          error_code: input.exhausted.code,
          error_message: input.exhausted.message,
          error_reason: input.exhausted.reason,
          failed_at: now,
          lease_expires_at: null,
          rsa_phone: null,
          updated_at: now,
        })
        .where('id', 'in', exhausted)
        .where('status', '=', 'sending')
        .where('unconfirmed_since', 'is not', null)
        .where('lease_expires_at', '<', now)
        .returning(['id', 'workspace_id', 'price', 'oa_id', 'quota_day'])
        .execute();
      await refundMessages(trx, rows, now);
      failed.push(...rows.map((row) => row.id));
    }
    return { unconfirmed, requeued, failed };
  });
}
