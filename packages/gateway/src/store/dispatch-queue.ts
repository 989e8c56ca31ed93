import { sql } from 'kysely';
import { runInTransaction, type Dialect, type Store, type Transaction } from './database.ts';
import { refundMessages } from './acceptances.ts';
import { claimDueRows, writeUnderClaim, type ClaimedRows } from './queue-claims.ts';
import { eraseRsaPhones, isOneOf } from './message-records.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';
import type { MessageRow, MessageStateRow } from './schema.ts';

export type ClaimedMessage = Pick<
  MessageRow,
  'id' | 'workspace_id' | 'oa_id' | 'template_id' | 'mode' | 'phone' | 'rsa_phone' | 'template_data' | 'attempts' | 'price' | 'quota_day' | 'lease_expires_at' | 'due_at'
>;

type ClaimedState = Pick<MessageStateRow, 'id' | 'attempts' | 'lease_expires_at' | 'due_at'>;

/** What a send needs of the claimed messages' own rows. */
function readClaimedMessages(trx: Transaction, dialect: Dialect, ids: readonly string[]) {
  return sql<Omit<ClaimedMessage, keyof ClaimedState> & { id: string }>`
    ${PLANNED_PER_RUN} SELECT id, workspace_id, oa_id, template_id, mode, phone, rsa_phone, template_data, price, quota_day
    FROM messages WHERE ${isOneOf(dialect, sql`id`, ids)}`.execute(trx);
}

/**
 * Claims due queued messages for one worker: status sending, a lease, one more attempt
 * (queue-claims.ts), and reads what sending them needs in the same transaction. Messages of
 * `skipAccounts` (sender accounts this worker cannot take more of right now) are left for later
 * or for other workers.
 */
export async function claimDueMessages(
  store: Store,
  input: { now: number; limit: number; leaseMs: number; skipAccounts?: readonly string[] },
): Promise<ClaimedMessage[]> {
  const leaseUntil = input.now + input.leaseMs;
  const skip = input.skipAccounts?.length ? sql`AND oa_id NOT IN (${sql.join([...input.skipAccounts])})` : sql``;
  const claim = {
    table: 'message_states',
    set: sql`status = 'sending', lease_expires_at = ${leaseUntil}, unconfirmed_since = NULL, attempts = attempts + 1, updated_at = ${input.now}`,
    due: sql`status = 'queued' AND due_at <= ${input.now} ${skip}`,
    orderBy: 'due_at',
    limit: input.limit,
    returning: 'id, attempts, lease_expires_at, due_at',
    // A claim lost to a power failure would send the message again without the reconciliation
    // that a claim found after a crash gets: it is on disk before the platform is called.
    durable: true,
  } as const;
  return claimDueRows<ClaimedState, ClaimedMessage>(store, claim, async (trx, states) => {
    const { rows } = await readClaimedMessages(trx, store.dialect, states.map((state) => state.id));
    const messages = new Map(rows.map((row) => [row.id, row]));
    return states.map((state) => ({ ...messages.get(state.id)!, ...state }));
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

type OutcomeOf<Kind extends DispatchOutcome['kind']> = Extract<DispatchOutcome, { kind: Kind }>;

function ofKind<Kind extends DispatchOutcome['kind']>(outcomes: readonly DispatchOutcome[], kind: Kind): OutcomeOf<Kind>[] {
  return outcomes.filter((outcome): outcome is OutcomeOf<Kind> => outcome.kind === kind);
}

/**
 * Our claim on a message still stands: the lease we took, or a lease the reconciler extended while
 * the outcome was unknown (a slow round that outlived its lease). Nobody else can have claimed an
 * unconfirmed message, since claims take queued rows only, so its late outcome is the truth.
 */
const CLAIMED_MESSAGES: ClaimedRows<DispatchOutcome> = {
  table: 'message_states',
  claimOf: (outcome) => ({ id: outcome.message.id, leaseExpiresAt: outcome.message.lease_expires_at }),
  stillHeld: sql`message_states.status = 'sending' AND (message_states.lease_expires_at = x.claimed_lease OR message_states.unconfirmed_since IS NOT NULL)`,
};

/**
 * The outcomes written (their claim still stood): one per id the write returned, so a message
 * named twice in one round (an outcome held past its claim, then a later claim's) is refunded once.
 */
function writtenOutcomes<Outcome extends DispatchOutcome>(outcomes: readonly Outcome[], written: readonly { id: string }[]): Outcome[] {
  const byId = new Map(outcomes.map((outcome) => [outcome.message.id, outcome]));
  return written.map((row) => byId.get(row.id)!);
}

/** The RSA ciphertext is kept only until the platform has the send, or never will. */
function rsaMessageIds(outcomes: readonly DispatchOutcome[]): string[] {
  return outcomes.filter((outcome) => outcome.message.rsa_phone !== null).map((outcome) => outcome.message.id);
}

async function recordSent(trx: Transaction, dialect: Dialect, sent: OutcomeOf<'sent'>[], now: number): Promise<void> {
  const write = {
    types: { provider_id: 'text', sent_time: 'bigint' },
    valuesOf: (outcome: OutcomeOf<'sent'>) => ({ provider_id: outcome.providerMsgId, sent_time: outcome.sentAt }),
  } as const;
  const written = await writeUnderClaim<OutcomeOf<'sent'>, { provider_id: string; sent_time: number }, { id: string }>(trx, dialect, CLAIMED_MESSAGES, sent, {
    ...write,
    set: sql`status = 'sent', provider_msg_id = x.provider_id, sent_at = x.sent_time, lease_expires_at = NULL, updated_at = ${now}`,
    returning: ['id'],
  });
  await eraseRsaPhones(trx, dialect, rsaMessageIds(writtenOutcomes(sent, written)));
  // A delivery event can beat this record: that message is already delivered, but sent when we sent it.
  // Only the messages the record above left alone can be such (a written one is 'sent' now).
  const writtenIds = new Set(written.map((row) => row.id));
  const notWritten = sent.filter((outcome) => !writtenIds.has(outcome.message.id));
  await writeUnderClaim(trx, dialect, { ...CLAIMED_MESSAGES, stillHeld: sql`message_states.status = 'delivered' AND message_states.sent_at IS NULL` }, notWritten, {
    ...write,
    set: sql`sent_at = x.sent_time, provider_msg_id = COALESCE(message_states.provider_msg_id, x.provider_id)`,
  });
}

/**
 * Records a round's outcomes in one transaction: sent (with the platform's id; the RSA ciphertext
 * is erased), failed (codes and reasons, refunded, quota released) or back to queued for a retry.
 * Each kind is one statement (per chunk of rows), written only where our claim still stands.
 */
export async function recordDispatchOutcomes(store: Store, outcomes: DispatchOutcome[], now: number): Promise<void> {
  if (outcomes.length === 0) return;
  const { dialect } = store;
  await runInTransaction(store, async (trx) => {
    await recordSent(trx, dialect, ofKind(outcomes, 'sent'), now);
    await writeUnderClaim(trx, dialect, CLAIMED_MESSAGES, ofKind(outcomes, 'retry'), {
      types: { next_due_at: 'bigint' },
      valuesOf: (outcome) => ({ next_due_at: outcome.dueAt }),
      set: sql`status = 'queued', due_at = x.next_due_at, lease_expires_at = NULL, unconfirmed_since = NULL, updated_at = ${now}`,
    });
    await writeUnderClaim(trx, dialect, CLAIMED_MESSAGES, ofKind(outcomes, 'released'), {
      types: { next_due_at: 'bigint' },
      valuesOf: (outcome) => ({ next_due_at: outcome.dueAt }),
      set: sql`status = 'queued', due_at = x.next_due_at, attempts = attempts - 1, lease_expires_at = NULL, unconfirmed_since = NULL, updated_at = ${now}`,
    });
    await writeUnderClaim(trx, dialect, CLAIMED_MESSAGES, ofKind(outcomes, 'unconfirmed'), {
      types: { wait_until: 'bigint' },
      valuesOf: (outcome) => ({ wait_until: outcome.waitUntil }),
      set: sql`unconfirmed_since = ${now}, lease_expires_at = x.wait_until, updated_at = ${now}`,
    });
    // Every message row first, the refunds' quota rows and wallets after: the lock order of acceptances.ts.
    const failures = ofKind(outcomes, 'failed');
    const failed = await writeUnderClaim<OutcomeOf<'failed'>, { code: number; error_text: string; reason: string }, { id: string }>(trx, dialect, CLAIMED_MESSAGES, failures, {
      types: { code: 'integer', error_text: 'text', reason: 'text' },
      valuesOf: (outcome) => ({ code: outcome.code, error_text: outcome.errorMessage, reason: outcome.reason }),
      set: sql`status = 'failed', error_code = x.code, error_message = x.error_text, error_reason = x.reason,
        failed_at = ${now}, lease_expires_at = NULL, updated_at = ${now}`,
      returning: ['id'],
    });
    const refunded = writtenOutcomes(failures, failed);
    await eraseRsaPhones(trx, dialect, rsaMessageIds(refunded));
    await refundMessages(trx, refunded.map((outcome) => outcome.message), now);
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
      .selectFrom('message_states')
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
        .updateTable('message_states')
        .set({ unconfirmed_since: now, lease_expires_at: now + input.graceMs, updated_at: now })
        .where('id', 'in', unconfirmed)
        .where('status', '=', 'sending')
        .where('unconfirmed_since', 'is', null)
        .where('lease_expires_at', '<', now)
        .execute();
    }
    if (requeued.length > 0) {
      await trx
        .updateTable('message_states')
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
        .updateTable('message_states')
        .set({
          status: 'failed',
          error_code: input.exhausted.code,
          error_message: input.exhausted.message,
          error_reason: input.exhausted.reason,
          failed_at: now,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('id', 'in', exhausted)
        .where('status', '=', 'sending')
        .where('unconfirmed_since', 'is not', null)
        .where('lease_expires_at', '<', now)
        .returning('id')
        .execute();
      if (rows.length > 0) {
        const ids = rows.map((row) => row.id);
        await eraseRsaPhones(trx, store.dialect, ids);
        await refundMessages(trx, await trx.selectFrom('messages').select(['id', 'workspace_id', 'price', 'oa_id', 'quota_day']).where('id', 'in', ids).execute(), now);
      }
      failed.push(...rows.map((row) => row.id));
    }
    return { unconfirmed, requeued, failed };
  });
}
