/**
 * PostgreSQL: an acceptance group in one statement, one round trip.
 *
 * The general path (commitAcceptances) decides as it goes, a round trip per step: claim the
 * idempotency keys, lock and read the quota rows, charge each wallet, add to the quota rows, insert
 * messages, ledger entries and records. Under load every round trip waits its turn on the event
 * loop behind the HTTP work, so a group's round trips, more than the database, set its latency.
 *
 * Here the group is planned in code as if every request fits:
 *   - no request's Idempotency-Key has a live record;
 *   - every quota row exists already (the general path creates a day's row), and every enforced
 *     daily quota covers every message of its requests;
 *   - every workspace's wallet pays for all of its requests in the group at once (balance and cap).
 * One statement first inserts the group's messages, which locks nothing another transaction
 * waits for, then takes the general path's locks in its order (expired idempotency records, quota
 * rows sorted, wallets sorted), reads under them whether the plan holds, and only if it does makes
 * the rest of the writes the general path would make in that case. So two groups of one workspace
 * insert side by side, in two server processes, and queue on its quota and wallet rows only for
 * the short end of the statement (with the locks first, a second group waited through the first
 * one's inserts, and each workspace had one group in flight). When the plan does not hold, the
 * statement fails on purpose and takes back everything it wrote, and the caller commits the group
 * the general way, which decides request by request, so one request's 402 never affects another.
 * The statement is a transaction of its own: it commits as it answers.
 */
import { CompiledQuery } from 'kysely';
import { createSortableId } from '../lib/ids.ts';
import { messagesOf, priceOf, quotaId, resultOf, type AcceptanceOutcome, type AcceptanceRequest } from './acceptances.ts';
import { isRetryableConflict, type Store } from './database.ts';
import { idempotencyKeyId, idempotencyRecordOf } from './idempotency.ts';
import { ACCEPTED_MESSAGE_COLUMNS, MESSAGE_STATE_COLUMNS } from './message-records.ts';
import { toPostgresBigintArray, toPostgresTextArray } from './postgres-array-literal.ts';
import type { IdempotencyRecordRow, MessageRow } from './schema.ts';

interface QuotaPlan {
  oaId: string;
  day: string;
  /** The general path reads the row's quota from the last request (in arrival order) that names it. */
  dailyQuota: number;
  /** Messages the group adds to the row's reservation. */
  added: number;
  /**
   * Messages reserved, in commit order, up to and including the last enforced request with any:
   * each enforced request gets all of its messages when this many fit in what is left of the quota.
   */
  neededByEnforced: number;
}

interface ChargePlan {
  workspaceId: string;
  amount: number;
  count: number;
}

interface LedgerPlan {
  id: string;
  workspaceId: string;
  amount: number;
  /** What this workspace's later requests in the group cost: balance_after = the final balance + this. */
  chargedAfter: number;
  messageCount: number;
  reference: string;
}

interface GroupPlan {
  records: IdempotencyRecordRow[];
  quotas: QuotaPlan[];
  charges: ChargePlan[];
  messages: MessageRow[];
  ledger: LedgerPlan[];
  outcomes: AcceptanceOutcome[];
}

/**
 * The group with every request accepted in full, in the general path's commit order: workspaces
 * sorted, each one's requests in arrival order. Null when two requests of the group carry the same
 * key, which only the general path sorts out.
 */
function planGroup(requests: AcceptanceRequest[], now: number): GroupPlan | null {
  const keys = new Set<string>();
  for (const request of requests) {
    if (!request.idempotency) continue;
    const id = idempotencyKeyId({ workspaceId: request.workspaceId, key: request.idempotency.key });
    if (keys.has(id)) return null;
    keys.add(id);
  }
  const byWorkspace = new Map<string, AcceptanceRequest[]>();
  const quotas = new Map<string, QuotaPlan>();
  for (const request of requests) {
    const inWorkspace = byWorkspace.get(request.workspaceId);
    if (inWorkspace) inWorkspace.push(request);
    else byWorkspace.set(request.workspaceId, [request]);
    const id = quotaId(request.quota.oaId, request.quota.day);
    const quota = quotas.get(id) ?? { oaId: request.quota.oaId, day: request.quota.day, dailyQuota: 0, added: 0, neededByEnforced: 0 };
    quota.dailyQuota = request.quota.dailyQuota;
    quotas.set(id, quota);
  }
  const plan: GroupPlan = { records: [], quotas: [], charges: [], messages: [], ledger: [], outcomes: [] };
  const outcomes = new Map<AcceptanceRequest, AcceptanceOutcome>();
  for (const workspaceId of [...byWorkspace.keys()].sort()) {
    const inWorkspace = byWorkspace.get(workspaceId)!.map((request) => {
      const messages = messagesOf(request);
      return { request, messages, amount: priceOf(messages, messages.length) };
    });
    let amount = 0;
    let count = 0;
    for (const item of inWorkspace) {
      amount += item.amount;
      count += item.messages.length;
    }
    if (count > 0) plan.charges.push({ workspaceId, amount, count });
    let chargedAfter = amount;
    for (const { request, messages, amount: requestAmount } of inWorkspace) {
      const quota = quotas.get(quotaId(request.quota.oaId, request.quota.day))!;
      quota.added += messages.length;
      if (request.quota.enforce && messages.length > 0) quota.neededByEnforced = quota.added;
      chargedAfter -= requestAmount;
      if (messages.length > 0) {
        for (const message of messages) plan.messages.push(message);
        plan.ledger.push({
          id: createSortableId('led', now),
          workspaceId,
          amount: -requestAmount,
          chargedAfter,
          messageCount: messages.length,
          reference: messages[0]!.id,
        });
      }
      const result = resultOf(request, messages.length);
      outcomes.set(request, { kind: 'accepted', result });
      if (request.idempotency) plan.records.push(idempotencyRecordOf(workspaceId, request.idempotency, result, now));
    }
  }
  // Sorted like the general path's, so both take the quota rows in one order.
  plan.quotas = [...quotas.keys()].sort().map((id) => quotas.get(id)!);
  plan.outcomes = requests.map((request) => outcomes.get(request)!);
  return plan;
}

/** Positional parameters, each with the type PostgreSQL should read it as. */
class Parameters {
  readonly values: unknown[] = [];

  add(value: unknown, type: string): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }

  /** One array parameter: a column of text of `rows`. */
  text<Row>(rows: Row[], pick: (row: Row) => string | null): string {
    return this.add(toPostgresTextArray(rows.map(pick)), 'text[]');
  }

  /** One array parameter: a column of whole numbers of `rows`. */
  bigint<Row>(rows: Row[], pick: (row: Row) => number | null): string {
    return this.add(toPostgresBigintArray(rows.map(pick)), 'bigint[]');
  }
}

/**
 * Columns of `columns` set in at least one row (the rest keep their default, NULL), each with its
 * array type, the parameter holding it, so a column of both tables is sent once.
 */
function messageColumns(messages: MessageRow[], columns: readonly (keyof MessageRow)[], parameters: Parameters, sent: Map<keyof MessageRow, string>): { name: keyof MessageRow; parameter: string }[] {
  const set: { name: keyof MessageRow; parameter: string }[] = [];
  for (const name of columns) {
    const sample = messages.find((message) => message[name] !== null && message[name] !== undefined)?.[name];
    if (sample === undefined) continue;
    let parameter = sent.get(name);
    if (parameter === undefined) {
      parameter =
        typeof sample === 'number'
          ? parameters.bigint(messages, (message) => (message[name] as number | null | undefined) ?? null)
          : parameters.text(messages, (message) => (message[name] as string | null | undefined) ?? null);
      sent.set(name, parameter);
    }
    set.push({ name, parameter });
  }
  return set;
}

/**
 * The statement. Its CTEs run in no promised order, so a step that must follow another waits for
 * it with a gate, a condition on a scalar subquery (`(SELECT count(*) FROM earlier) >= 0`, or the
 * decision) that PostgreSQL evaluates once, running what it reads to the end, before the step
 * reads its first row. The locks are taken by SELECT … FOR UPDATE, which in READ COMMITTED waits
 * for a row's concurrent writer and returns its newest version, so the decision reads what the
 * general path would read under the same locks.
 *
 * A group without Idempotency-Keys (the common case) gets a text without the idempotency steps.
 * Prepared, a generic plan assumes ten rows for every unnest; with ten idempotency index probes
 * priced in, PostgreSQL judged the generic plan dearer than planning afresh on a store of some
 * size, and planned each run (measured: half a millisecond a group on 5,000,000 messages).
 */
function statementOf(plan: GroupPlan, now: number): CompiledQuery {
  const { records, quotas, charges, messages, ledger } = plan;
  const parameters = new Parameters();
  const at = parameters.add(now, 'bigint');
  const withKeys = records.length > 0;
  const recordWorkspaces = withKeys ? parameters.text(records, (row) => row.workspace_id) : '';
  const recordKeys = withKeys ? parameters.text(records, (row) => row.idempotency_key) : '';
  const quotaOaIds = parameters.text(quotas, (quota) => quota.oaId);
  const quotaDays = parameters.text(quotas, (quota) => quota.day);
  const quotaAdded = parameters.bigint(quotas, (quota) => quota.added);
  const walletIds = parameters.text(charges, (charge) => charge.workspaceId);
  const walletAmounts = parameters.bigint(charges, (charge) => charge.amount);
  const walletCounts = parameters.bigint(charges, (charge) => charge.count);
  const fits = '(SELECT fits FROM decision)';

  const steps: string[] = [];
  if (withKeys) {
    steps.push(
      // 1. The request's own idempotency records: expired ones go (so the key can be stored again),
      // live ones mean someone else did this request.
      `expired_keys AS (
      DELETE FROM idempotency_records USING unnest(${recordWorkspaces}, ${recordKeys}) AS claim(workspace_id, idempotency_key)
      WHERE idempotency_records.workspace_id = claim.workspace_id AND idempotency_records.idempotency_key = claim.idempotency_key
        AND idempotency_records.expires_at <= ${at}
      RETURNING 1
    )`,
      `live_keys AS (
      SELECT 1 FROM idempotency_records JOIN unnest(${recordWorkspaces}, ${recordKeys}) AS claim(workspace_id, idempotency_key)
        ON idempotency_records.workspace_id = claim.workspace_id AND idempotency_records.idempotency_key = claim.idempotency_key
      WHERE idempotency_records.expires_at > ${at}
    )`,
    );
  }
  const inserted: string[] = [];
  if (messages.length > 0) {
    const sent = new Map<keyof MessageRow, string>();
    for (const [table, names] of [['messages', ACCEPTED_MESSAGE_COLUMNS], ['message_states', MESSAGE_STATE_COLUMNS]] as const) {
      const columns = messageColumns(messages, names, parameters, sent);
      steps.push(`new_${table} AS (
      INSERT INTO ${table} (${columns.map((column) => column.name).join(', ')})
      SELECT * FROM unnest(${columns.map((column) => column.parameter).join(', ')})
      RETURNING 1
    )`);
      inserted.push(`(SELECT count(*) FROM new_${table})`);
    }
  }
  const gates = [...(withKeys ? ['(SELECT count(*) FROM expired_keys)'] : []), ...inserted];
  steps.push(
    // 3. Quota rows, in the order given; what is left of each is read under the lock.
    `quota_rows AS (
      SELECT quota_reservations.reserved, quota.reserved_at_most
      FROM unnest(${quotaOaIds}, ${quotaDays},
        ${parameters.bigint(quotas, (quota) => (quota.neededByEnforced > 0 ? quota.dailyQuota - quota.neededByEnforced : null))})
        WITH ORDINALITY AS quota(oa_id, day, reserved_at_most, position)
      JOIN quota_reservations ON quota_reservations.oa_id = quota.oa_id AND quota_reservations.day = quota.day
      ${gates.length > 0 ? `WHERE ${gates.join(' + ')} >= 0` : ''}
      ORDER BY quota.position
      FOR UPDATE OF quota_reservations
    )`,
    // 4. Wallets, in the order given. FOR NO KEY UPDATE is the lock the general path's UPDATE
    // takes: inserts that only reference the workspace (foreign keys) go on meanwhile.
    `wallets AS (
      SELECT workspaces.balance >= wallet.amount
          AND (workspaces.message_cap IS NULL OR workspaces.messages_accepted + wallet.count <= workspaces.message_cap) AS pays
      FROM unnest(${walletIds}, ${walletAmounts}, ${walletCounts}) WITH ORDINALITY AS wallet(id, amount, count, position)
      JOIN workspaces ON workspaces.id = wallet.id
      WHERE (SELECT count(*) FROM quota_rows) >= 0
      ORDER BY wallet.position
      FOR NO KEY UPDATE OF workspaces
    )`,
    `decision AS (
      SELECT ${withKeys ? 'NOT EXISTS (SELECT 1 FROM live_keys) AND' : ''}
        (SELECT count(*) FROM quota_rows WHERE reserved_at_most IS NULL OR reserved <= reserved_at_most) = ${parameters.add(quotas.length, 'bigint')}
        AND (SELECT count(*) FROM wallets WHERE pays) = ${parameters.add(charges.length, 'bigint')} AS fits
    )`,
    // 5. The writes, only when everything fits: rows locked above, then new rows.
    `reserved AS (
      UPDATE quota_reservations SET reserved = quota_reservations.reserved + quota.added
      FROM unnest(${quotaOaIds}, ${quotaDays}, ${quotaAdded}) AS quota(oa_id, day, added)
      WHERE quota_reservations.oa_id = quota.oa_id AND quota_reservations.day = quota.day AND quota.added > 0 AND ${fits}
    )`,
    `charged AS (
      UPDATE workspaces SET balance = workspaces.balance - wallet.amount,
        messages_accepted = workspaces.messages_accepted + wallet.count, updated_at = ${at}
      FROM unnest(${walletIds}, ${walletAmounts}, ${walletCounts}) AS wallet(id, amount, count)
      WHERE workspaces.id = wallet.id AND ${fits}
      RETURNING workspaces.id, workspaces.balance
    )`,
    `new_ledger AS (
      INSERT INTO wallet_ledger (id, workspace_id, kind, amount, balance_after, message_count, reference, created_at)
      SELECT entry.id, entry.workspace_id, 'charge', entry.amount, charged.balance + entry.charged_after, entry.message_count, entry.reference, ${at}
      FROM unnest(${parameters.text(ledger, (entry) => entry.id)}, ${parameters.text(ledger, (entry) => entry.workspaceId)},
        ${parameters.bigint(ledger, (entry) => entry.amount)}, ${parameters.bigint(ledger, (entry) => entry.chargedAfter)},
        ${parameters.bigint(ledger, (entry) => entry.messageCount)}, ${parameters.text(ledger, (entry) => entry.reference)})
        AS entry(id, workspace_id, amount, charged_after, message_count, reference)
      JOIN charged ON charged.id = entry.workspace_id
    )`,
  );
  if (withKeys) {
    steps.push(
      // A plain INSERT: a record that another transaction stored since the check above is a unique
      // violation, which fails the whole statement (the writer then retries request by request).
      `new_keys AS (
      INSERT INTO idempotency_records (workspace_id, idempotency_key, request_hash, result, created_at, expires_at)
      SELECT workspace_id, idempotency_key, request_hash, result, ${at}, expires_at
      FROM unnest(${recordWorkspaces}, ${recordKeys}, ${parameters.text(records, (row) => row.request_hash)},
        ${parameters.text(records, (row) => row.result)}, ${parameters.bigint(records, (row) => row.expires_at)})
        AS claim(workspace_id, idempotency_key, request_hash, result, expires_at)
      WHERE ${fits}
    )`,
    );
  }
  return CompiledQuery.raw(`WITH ${steps.join(',\n')}\nSELECT CAST(CASE WHEN fits THEN 'true' ELSE '${DOES_NOT_FIT}' END AS boolean) AS fits FROM decision`, parameters.values);
}

/**
 * How the statement fails when the plan does not hold. Plain SQL cannot raise an error of its own,
 * but a cast of this text to boolean fails with invalid_text_representation (22P02), naming it.
 */
const DOES_NOT_FIT = 'acceptance-group-does-not-fit';

function isPlanRefusal(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '22P02' && typeof message === 'string' && message.includes(DOES_NOT_FIT);
}

const MAX_ATTEMPTS = 5;

/**
 * Commits a group in one statement when every request fits as planned (see above) and returns
 * the outcomes; returns null, having committed nothing of the group, when one does not.
 */
export async function commitAcceptancesInOneStatement(store: Store, requests: AcceptanceRequest[], now: number): Promise<AcceptanceOutcome[] | null> {
  const plan = planGroup(requests, now);
  if (!plan) return null;
  const statement = statementOf(plan, now);
  for (let attempt = 1; ; attempt += 1) {
    try {
      const { rows } = await store.db.executeQuery<{ fits: boolean }>(statement);
      return rows[0]?.fits === true ? plan.outcomes : null;
    } catch (error) {
      if (isPlanRefusal(error)) return null;
      // A deadlock or serialisation failure rolled the statement back whole: run it again.
      if (attempt >= MAX_ATTEMPTS || !isRetryableConflict(error)) throw error;
    }
  }
}
