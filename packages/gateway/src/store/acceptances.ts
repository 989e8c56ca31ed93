/**
 * Money and quota: charges at acceptance, refunds on cancel and on failure.
 *
 * LOCK ORDER. Every transaction that changes wallets (`workspaces` rows), daily quota reservations
 * (`quota_reservations` rows) or existing message rows takes its row locks in this one order, so
 * on PostgreSQL no two of them can wait on each other in a cycle (a deadlock aborts one of them;
 * under load the retries cost most of the throughput and, when they run out, a 500):
 *
 *   1. idempotency records of the request's own key (claimIdempotencyKeys), when it has one;
 *   2. existing message rows and their states (cancel's DELETEs, the dispatcher's outcome
 *      UPDATEs), all of them before anything below;
 *   3. quota reservation rows, sorted by (oa_id, day), all of them before any wallet, even when
 *      the transaction only adds to them (on PostgreSQL single sends lock theirs before charging);
 *   4. wallets, sorted by workspace id;
 *   5. then only inserts of new rows (messages and their states, ledger entries, idempotency records).
 *
 * A transaction may skip a step but never go back to an earlier one. Top-ups lock only a wallet.
 * Inserts of rows with new ids lock nothing another transaction waits for, so they may also come
 * before step 3: the one-statement path on PostgreSQL inserts its messages first, so that groups of
 * one workspace insert side by side (acceptances-postgres.ts).
 * SQLite takes its single write lock at BEGIN IMMEDIATE, so the order costs it nothing.
 */
import { sql } from 'kysely';
import { createSortableId } from '../lib/ids.ts';
import { compiledOnce } from './compiled-query.ts';
import type { Dialect, Transaction } from './database.ts';
import { insertRows } from './bulk-insert.ts';
import { claimIdempotencyKeys, idempotencyKeyId, idempotencyRecordOf } from './idempotency.ts';
import { ACCEPTED_MESSAGE_COLUMNS, MESSAGE_STATE_COLUMNS } from './message-records.ts';
import type { IdempotencyRecordRow, LedgerRow, MessageRow } from './schema.ts';

/** What a request said of a recipient, repeated in its result. */
export interface RecipientEcho {
  phone?: string;
  trackingId?: string;
}

/** A recipient of a request: refused before acceptance (with the reason), or a message to accept. */
export type Candidate = { echo: RecipientEcho } & ({ refusal: string } | { message: MessageRow });

/** What became of one recipient, in request order. */
export type RecipientResult = RecipientEcho &
  ({ status: 'queued'; messageId: string; messageTrackingId: string } | { status: 'refused'; refusal: string });

/**
 * What an acceptance committed, as data: stored with the request's Idempotency-Key, so a replay
 * answers from exactly this. Every response to a send is built from it.
 */
export interface AcceptedResult {
  acceptedCount: number;
  /** When the messages go, if later than now. */
  scheduledAt: number | null;
  recipients: RecipientResult[];
}

/**
 * The sender account's daily quota for the day the messages go (for batch and RSA, what the
 * service allows us on that day: see caches/platform-quota.ts). Every acceptance reserves it;
 * when enforced (batch and RSA) only the messages that fit are accepted and the rest are refused
 * with `overQuotaRefusal`; otherwise (single sends, docs/api.md: "not pre-checked") all are, and
 * the platform refuses what is over.
 */
export type QuotaRule = { oaId: string; day: string; dailyQuota: number } & ({ enforce: false } | { enforce: true; overQuotaRefusal: string });

/** One request's recipients to accept: every message, or (with an enforced quota) the prefix that fits. */
export interface AcceptanceRequest {
  workspaceId: string;
  recipients: Candidate[];
  scheduledAt: number | null;
  quota: QuotaRule;
  idempotency: { key: string; requestHash: string; expiresAt: number } | null;
}

export type AcceptanceOutcome =
  | { kind: 'accepted'; result: AcceptedResult }
  | { kind: 'insufficient_balance'; required: number; balance: number }
  | { kind: 'message_cap_reached'; requested: number; cap: number; used: number }
  | { kind: 'idempotency_conflict' };

export function messagesOf(request: AcceptanceRequest): MessageRow[] {
  return request.recipients.flatMap((recipient) => ('message' in recipient ? [recipient.message] : []));
}

/** How many message rows a request may add: what a group's size is counted in. */
export function countMessages(request: AcceptanceRequest): number {
  let count = 0;
  for (const recipient of request.recipients) if ('message' in recipient) count += 1;
  return count;
}

/** The result of accepting the first `acceptedCount` messages of a request. */
export function resultOf(request: AcceptanceRequest, acceptedCount: number): AcceptedResult {
  let messageIndex = 0;
  // Fields copied one by one, not spread: a batch builds hundreds of these per request, and a
  // spread of a small object of varying shape costs a runtime call each time.
  const recipients = request.recipients.map((recipient): RecipientResult => {
    const { phone, trackingId } = recipient.echo;
    if ('refusal' in recipient) return { phone, trackingId, status: 'refused', refusal: recipient.refusal };
    const queued = messageIndex < acceptedCount;
    messageIndex += 1;
    if (queued) return { phone, trackingId, status: 'queued', messageId: recipient.message.id, messageTrackingId: recipient.message.tracking_id };
    if (!request.quota.enforce) throw new Error('a quota that is not enforced accepts every message');
    return { phone, trackingId, status: 'refused', refusal: request.quota.overQuotaRefusal };
  });
  return { acceptedCount, scheduledAt: request.scheduledAt, recipients };
}

type QuotaLedger = Map<string, number>;

export const quotaId = (oaId: string, day: string): string => `${oaId}\u0000${day}`;

/** A request with its messages, taken out of its recipients once per commit. */
interface Pending {
  request: AcceptanceRequest;
  messages: MessageRow[];
}

function grantFor({ request, messages }: Pending, remainingQuota: QuotaLedger): number {
  if (!request.quota.enforce) return messages.length;
  const remaining = remainingQuota.get(quotaId(request.quota.oaId, request.quota.day)) ?? 0;
  return Math.max(0, Math.min(messages.length, remaining));
}

export function priceOf(messages: MessageRow[], count: number): number {
  let total = 0;
  for (let index = 0; index < count; index += 1) total += messages[index]?.price ?? 0;
  return total;
}

const lockQuotaRowStatement = compiledOnce<[string, string], { reserved: number }>(
  (db, oaId, day) =>
    db
      .insertInto('quota_reservations')
      .values({ oa_id: oaId, day, reserved: 0 })
      .onConflict((conflict) => conflict.columns(['oa_id', 'day']).doUpdateSet({ reserved: sql`quota_reservations.reserved` }))
      .returning('reserved'),
  2,
);

const readQuotaRowStatement = compiledOnce<[string, string], { reserved: number }>(
  (db, oaId, day) => db.selectFrom('quota_reservations').select('reserved').where('oa_id', '=', oaId).where('day', '=', day),
  2,
);

/**
 * Step 3 of the lock order: what is left of each daily quota these requests reserve from, read
 * before any wallet is charged.
 * - PostgreSQL locks every such row (creating the missing ones), in sorted order, even where the
 *   quota is not enforced: recordQuotaUse adds to it after the wallets. An upsert per row (a group
 *   almost always has one): ON CONFLICT DO UPDATE locks an existing row as FOR UPDATE would.
 * - SQLite already holds its one write lock (BEGIN IMMEDIATE), so it only reads the rows of
 *   enforced quotas (batch, RSA), the only ones whose count is used.
 */
async function readRemainingQuota(trx: Transaction, dialect: Dialect, requests: AcceptanceRequest[]): Promise<QuotaLedger> {
  const keys = new Map<string, { oaId: string; day: string; dailyQuota: number }>();
  for (const request of requests) {
    if (dialect === 'postgres' || request.quota.enforce) keys.set(quotaId(request.quota.oaId, request.quota.day), request.quota);
  }
  const read = dialect === 'postgres' ? lockQuotaRowStatement : readQuotaRowStatement;
  const remaining: QuotaLedger = new Map();
  for (const id of [...keys.keys()].sort()) {
    const quota = keys.get(id)!;
    const [row] = await read(trx, quota.oaId, quota.day);
    remaining.set(id, quota.dailyQuota - Number(row?.reserved ?? 0));
  }
  return remaining;
}

const chargeWalletStatement = compiledOnce<[string, number, number, number], { balance: number }>(
  (db, workspaceId, amount, count, now) =>
    db
      .updateTable('workspaces')
      .set((eb) => ({ balance: eb('balance', '-', amount), messages_accepted: eb('messages_accepted', '+', count), updated_at: now }))
      .where('id', '=', workspaceId)
      .where('balance', '>=', amount)
      .where((eb) => eb.or([eb('message_cap', 'is', null), eb(eb('messages_accepted', '+', count), '<=', eb.ref('message_cap'))]))
      .returning('balance'),
  4,
);

/** The single-statement charge (README, Architecture): balance and account cap checked in the UPDATE itself. */
async function chargeWallet(trx: Transaction, workspaceId: string, amount: number, count: number, now: number): Promise<number | undefined> {
  const [row] = await chargeWalletStatement(trx, workspaceId, amount, count, now);
  return row?.balance;
}

async function explainRejection(trx: Transaction, workspaceId: string, amount: number, count: number): Promise<AcceptanceOutcome> {
  const workspace = await trx
    .selectFrom('workspaces')
    .select(['balance', 'message_cap', 'messages_accepted'])
    .where('id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  if (workspace.message_cap !== null && workspace.messages_accepted + count > workspace.message_cap) {
    return { kind: 'message_cap_reached', requested: count, cap: workspace.message_cap, used: workspace.messages_accepted };
  }
  return { kind: 'insufficient_balance', required: amount, balance: workspace.balance };
}

interface Charged extends Pending {
  acceptedCount: number;
  amount: number;
  balanceAfter: number;
}

async function chargeWorkspace(
  trx: Transaction,
  pendings: Pending[],
  remainingQuota: QuotaLedger,
  now: number,
  outcomes: Map<AcceptanceRequest, AcceptanceOutcome>,
): Promise<Charged[]> {
  const workspaceId = pendings[0]!.request.workspaceId;
  const useQuota = (request: AcceptanceRequest, granted: number, quota: QuotaLedger): void => {
    const id = quotaId(request.quota.oaId, request.quota.day);
    quota.set(id, (quota.get(id) ?? 0) - granted);
  };
  // Fast path: one UPDATE charges every request of this workspace in the group.
  const trial: QuotaLedger = new Map(remainingQuota);
  const planned = pendings.map((pending) => {
    const acceptedCount = grantFor(pending, trial);
    useQuota(pending.request, acceptedCount, trial);
    return { ...pending, acceptedCount, amount: priceOf(pending.messages, acceptedCount) };
  });
  const totalAmount = planned.reduce((sum, item) => sum + item.amount, 0);
  const totalCount = planned.reduce((sum, item) => sum + item.acceptedCount, 0);
  if (totalCount === 0) return planned.map((item) => ({ ...item, balanceAfter: Number.NaN }));
  const finalBalance = await chargeWallet(trx, workspaceId, totalAmount, totalCount, now);
  if (finalBalance !== undefined) {
    for (const [id, value] of trial) remainingQuota.set(id, value);
    let balanceAfter = finalBalance + totalAmount;
    return planned.map((item) => {
      balanceAfter -= item.amount;
      return { ...item, balanceAfter };
    });
  }
  // Slow path: the group does not fit, so charge request by request, in arrival order.
  const charged: Charged[] = [];
  for (const pending of pendings) {
    const acceptedCount = grantFor(pending, remainingQuota);
    const amount = priceOf(pending.messages, acceptedCount);
    const balanceAfter = acceptedCount === 0 ? Number.NaN : await chargeWallet(trx, workspaceId, amount, acceptedCount, now);
    if (balanceAfter === undefined) {
      outcomes.set(pending.request, await explainRejection(trx, workspaceId, amount, acceptedCount));
      continue;
    }
    useQuota(pending.request, acceptedCount, remainingQuota);
    charged.push({ ...pending, acceptedCount, amount, balanceAfter });
  }
  return charged;
}

const addQuotaUseStatement = compiledOnce<[string, string, number], never>(
  (db, oaId, day, count) =>
    db
      .insertInto('quota_reservations')
      .values({ oa_id: oaId, day, reserved: count })
      .onConflict((conflict) => conflict.columns(['oa_id', 'day']).doUpdateSet({ reserved: sql`quota_reservations.reserved + excluded.reserved` })),
  3,
);

async function recordQuotaUse(trx: Transaction, charged: Charged[]): Promise<void> {
  const used = new Map<string, { oaId: string; day: string; count: number }>();
  for (const { request, acceptedCount } of charged) {
    if (acceptedCount === 0) continue;
    const id = quotaId(request.quota.oaId, request.quota.day);
    const entry = used.get(id) ?? { oaId: request.quota.oaId, day: request.quota.day, count: 0 };
    entry.count += acceptedCount;
    used.set(id, entry);
  }
  // On PostgreSQL, rows locked already (readRemainingQuota); sorted all the same.
  for (const id of [...used.keys()].sort()) {
    const entry = used.get(id)!;
    await addQuotaUseStatement(trx, entry.oaId, entry.day, entry.count);
  }
}

/**
 * Accepts a group of requests in one transaction (group commit, README, Architecture): idempotency keys,
 * daily quota reservations, the wallet charge with the account cap, message rows, ledger rows and
 * idempotency records. A request that does not fit is rejected whole and changes nothing.
 */
export async function commitAcceptances(
  trx: Transaction,
  dialect: Dialect,
  requests: AcceptanceRequest[],
  now: number,
): Promise<AcceptanceOutcome[]> {
  const outcomes = new Map<AcceptanceRequest, AcceptanceOutcome>();
  const keyed = requests.filter((request) => request.idempotency);
  const taken = await claimIdempotencyKeys(
    trx,
    keyed.map((request) => ({ workspaceId: request.workspaceId, key: request.idempotency!.key })),
    now,
  );
  for (const request of keyed) {
    if (taken.has(idempotencyKeyId({ workspaceId: request.workspaceId, key: request.idempotency!.key }))) {
      outcomes.set(request, { kind: 'idempotency_conflict' });
    }
  }
  const open = requests.filter((request) => !outcomes.has(request));
  const remainingQuota = await readRemainingQuota(trx, dialect, open);

  const byWorkspace = new Map<string, Pending[]>();
  for (const request of open) {
    const pending = { request, messages: messagesOf(request) };
    const pendings = byWorkspace.get(request.workspaceId);
    if (pendings) pendings.push(pending);
    else byWorkspace.set(request.workspaceId, [pending]);
  }
  const charged: Charged[] = [];
  // Sorted, so concurrent transactions always lock wallets in the same order.
  for (const workspaceId of [...byWorkspace.keys()].sort()) {
    charged.push(...(await chargeWorkspace(trx, byWorkspace.get(workspaceId)!, remainingQuota, now, outcomes)));
  }
  await recordQuotaUse(trx, charged);

  const messages: MessageRow[] = [];
  const ledger: LedgerRow[] = [];
  const records: IdempotencyRecordRow[] = [];
  for (const { request, messages: candidates, acceptedCount, amount, balanceAfter } of charged) {
    for (let index = 0; index < acceptedCount; index += 1) messages.push(candidates[index]!);
    if (acceptedCount > 0) {
      ledger.push({
        id: createSortableId('led', now),
        workspace_id: request.workspaceId,
        kind: 'charge',
        amount: -amount,
        balance_after: balanceAfter,
        message_count: acceptedCount,
        reference: candidates[0]!.id,
        note: null,
        created_at: now,
      });
    }
    const result = resultOf(request, acceptedCount);
    outcomes.set(request, { kind: 'accepted', result });
    if (request.idempotency) records.push(idempotencyRecordOf(request.workspaceId, request.idempotency, result, now));
  }
  await insertRows(trx, dialect, 'messages', messages, { columns: ACCEPTED_MESSAGE_COLUMNS });
  await insertRows(trx, dialect, 'message_states', messages, { columns: MESSAGE_STATE_COLUMNS });
  await insertRows(trx, dialect, 'wallet_ledger', ledger);
  await insertRows(trx, dialect, 'idempotency_records', records);
  return requests.map((request) => outcomes.get(request)!);
}

/** What a refund needs of a message. */
export type RefundableMessage = Pick<MessageRow, 'id' | 'workspace_id' | 'price' | 'oa_id' | 'quota_day'>;

/** Ledger rows per INSERT: 9 values each keeps a statement far under SQLite's 32,766. */
const LEDGER_ROWS_PER_STATEMENT = 500;

/**
 * Hands back what messages took at acceptance: their price, their place under the account cap and
 * their daily quota reservations, with one refund entry per message in the ledger. The caller has
 * already deleted or updated the message rows (step 2 of the lock order); this takes steps 3 and 4:
 * the quota rows, sorted, then the wallets, sorted, one UPDATE each however many messages it holds.
 */
export async function refundMessages(trx: Transaction, messages: RefundableMessage[], now: number): Promise<void> {
  if (messages.length === 0) return;
  const quotas = new Map<string, { oaId: string; day: string; count: number }>();
  const wallets = new Map<string, { amount: number; messages: RefundableMessage[] }>();
  for (const message of messages) {
    if (message.quota_day !== null) {
      const id = quotaId(message.oa_id, message.quota_day);
      const quota = quotas.get(id) ?? { oaId: message.oa_id, day: message.quota_day, count: 0 };
      quota.count += 1;
      quotas.set(id, quota);
    }
    const wallet = wallets.get(message.workspace_id) ?? { amount: 0, messages: [] };
    wallet.amount += message.price;
    wallet.messages.push(message);
    wallets.set(message.workspace_id, wallet);
  }
  for (const id of [...quotas.keys()].sort()) {
    const quota = quotas.get(id)!;
    await trx
      .updateTable('quota_reservations')
      .set((eb) => ({ reserved: eb('reserved', '-', quota.count) }))
      .where('oa_id', '=', quota.oaId)
      .where('day', '=', quota.day)
      .execute();
  }
  const entries: LedgerRow[] = [];
  for (const workspaceId of [...wallets.keys()].sort()) {
    const wallet = wallets.get(workspaceId)!;
    const updated = await trx
      .updateTable('workspaces')
      .set((eb) => ({ balance: eb('balance', '+', wallet.amount), messages_accepted: eb('messages_accepted', '-', wallet.messages.length), updated_at: now }))
      .where('id', '=', workspaceId)
      .returning('balance')
      .executeTakeFirstOrThrow();
    // One entry per message, each with the balance as if refunded one after the other.
    let balanceAfter = updated.balance - wallet.amount;
    for (const message of wallet.messages) {
      balanceAfter += message.price;
      entries.push({
        id: createSortableId('led', now),
        workspace_id: workspaceId,
        kind: 'refund',
        amount: message.price,
        balance_after: balanceAfter,
        message_count: 1,
        reference: message.id,
        note: null,
        created_at: now,
      });
    }
  }
  for (let start = 0; start < entries.length; start += LEDGER_ROWS_PER_STATEMENT) {
    await trx.insertInto('wallet_ledger').values(entries.slice(start, start + LEDGER_ROWS_PER_STATEMENT)).execute();
  }
}
