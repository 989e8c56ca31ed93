/**
 * The one-statement acceptance on PostgreSQL (acceptances-postgres.ts) against the general path
 * (acceptances.ts): two databases in the same state are given the same groups, one the way the
 * acceptance writer commits them (one statement, else the general path), the other by the general
 * path alone. Outcomes and every row of both databases must come out the same, and the statement
 * must have committed exactly the groups in which every request fits. PostgreSQL only: runs when
 * TMS_TEST_DATABASE_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitAcceptances, type AcceptanceOutcome, type AcceptanceRequest, type Candidate } from './acceptances.ts';
import { commitAcceptancesInOneStatement } from './acceptances-postgres.ts';
import { openStore, runInTransaction, type Store } from './database.ts';
import { migrate } from './migrate.ts';
import type { MessageRow } from './schema.ts';

const POSTGRES_ADMIN_URL = process.env.TMS_TEST_DATABASE_URL;

interface Scratch {
  store: Store;
  url: string;
  drop(): Promise<void>;
}

async function openScratchStore(): Promise<Scratch> {
  const name = `tms_accept_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL!);
  url.pathname = `/${name}`;
  const store = openStore({ kind: 'postgres', url: url.toString(), poolSize: 2 });
  await migrate(store, 0);
  return {
    store,
    url: url.toString(),
    drop: async () => {
      await store.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

const DAY = '2026-11-24';
const NEXT_DAY = '2026-11-25';
const PRICE = 100;
/** Wallets: rich, poor (10 messages), capped (5 messages over its life). */
const RICH = 'ws_a_rich';
const POOR = 'ws_b_poor';
const CAPPED = 'ws_c_capped';
const OA_OF: Record<string, string> = { [RICH]: 'oa_rich', [POOR]: 'oa_poor', [CAPPED]: 'oa_capped' };

async function seed(store: Store): Promise<void> {
  const workspace = (id: string, balance: number, cap: number | null) => ({ id, name: id, status: 'active' as const, balance, message_cap: cap, messages_accepted: 0, is_demo: 0, created_at: 0, updated_at: 0 });
  await store.db.insertInto('workspaces').values([workspace(RICH, 100_000_000, null), workspace(POOR, 10 * PRICE, null), workspace(CAPPED, 100_000_000, 5)]).execute();
  await store.db
    .insertInto('quota_reservations')
    .values(Object.values(OA_OF).map((oaId) => ({ oa_id: oaId, day: DAY, reserved: 0 })))
    .execute();
  const record = (key: string, expiresAt: number) => ({ workspace_id: RICH, idempotency_key: key, request_hash: 'old', result: '{"acceptedCount":0}', status_code: null, response_body: null, created_at: 0, expires_at: expiresAt });
  await store.db.insertInto('idempotency_records').values([record('expired-key', 500), record('live-key', 10_000_000)]).execute();
}

/** Every row the acceptance writes, in a stable order; ledger ids are random, so left out. */
async function snapshot(store: Store): Promise<unknown> {
  const { db } = store;
  return {
    workspaces: await db.selectFrom('workspaces').select(['id', 'balance', 'messages_accepted', 'updated_at']).orderBy('id').execute(),
    quotas: await db.selectFrom('quota_reservations').selectAll().orderBy('oa_id').orderBy('day').execute(),
    messages: await db.selectFrom('messages').selectAll().orderBy('id').execute(),
    messageStates: await db.selectFrom('message_states').selectAll().orderBy('id').execute(),
    ledger: await db
      .selectFrom('wallet_ledger')
      .select(['workspace_id', 'kind', 'amount', 'balance_after', 'message_count', 'reference', 'note', 'created_at'])
      .orderBy('reference')
      .execute(),
    records: await db.selectFrom('idempotency_records').selectAll().orderBy('workspace_id').orderBy('idempotency_key').execute(),
  };
}

let messageNumber = 0;

function message(workspaceId: string, day: string, now: number): MessageRow {
  messageNumber += 1;
  const id = `msg_${String(messageNumber).padStart(6, '0')}`;
  return {
    id,
    workspace_id: workspaceId,
    api_key_id: 'key_1',
    tracking_id: `track_${messageNumber}`,
    status: 'queued',
    mode: 'plain',
    phone: `09${String(messageNumber).padStart(8, '0')}`,
    carrier: 'viettel',
    rsa_phone: null,
    source: 'api',
    template_id: 'tpl_1',
    oa_id: OA_OF[workspaceId]!,
    template_data: '{"name":"A"}',
    price: PRICE,
    quota_day: day,
    provider_msg_id: null,
    error_code: null,
    error_message: null,
    error_reason: null,
    due_at: now,
    scheduled_at: null,
    attempts: 0,
    lease_expires_at: null,
    unconfirmed_since: null,
    sent_at: null,
    status_checked_at: null,
    delivered_at: null,
    failed_at: null,
    created_at: now,
    updated_at: now,
  };
}

interface RequestShape {
  workspaceId: string;
  messages: number;
  refused?: number;
  /** Batch and RSA: only what fits in the quota is accepted. */
  enforce?: boolean;
  dailyQuota?: number;
  day?: string;
  key?: string;
}

function request(shape: RequestShape, now: number): AcceptanceRequest {
  const day = shape.day ?? DAY;
  const recipients: Candidate[] = [];
  for (let index = 0; index < (shape.refused ?? 0); index += 1) recipients.push({ echo: { phone: 'x' }, refusal: 'missing_phone: recipient has no phone number' });
  for (let index = 0; index < shape.messages; index += 1) recipients.push({ echo: { phone: `p${index}` }, message: message(shape.workspaceId, day, now) });
  const oaId = OA_OF[shape.workspaceId]!;
  const dailyQuota = shape.dailyQuota ?? 1_000_000;
  return {
    workspaceId: shape.workspaceId,
    recipients,
    scheduledAt: null,
    quota: shape.enforce ? { oaId, day, dailyQuota, enforce: true, overQuotaRefusal: 'daily_quota_exceeded: no quota left' } : { oaId, day, dailyQuota, enforce: false },
    idempotency: shape.key ? { key: shape.key, requestHash: `hash-${shape.key}`, expiresAt: now + 1_000_000 } : null,
  };
}

describe.runIf(POSTGRES_ADMIN_URL)('acceptance in one statement on PostgreSQL', () => {
  let viaStatement: Scratch;
  let viaGeneralPath: Scratch;
  let clock = 1_000;

  beforeAll(async () => {
    [viaStatement, viaGeneralPath] = await Promise.all([openScratchStore(), openScratchStore()]);
    await Promise.all([seed(viaStatement.store), seed(viaGeneralPath.store)]);
  });
  afterAll(async () => {
    await viaStatement?.drop();
    await viaGeneralPath?.drop();
  });

  /** Commits one group both ways, checks both databases agree, and says whether the statement committed it. */
  async function commitBothWays(shapes: RequestShape[]): Promise<{ inOneStatement: boolean; outcomes: AcceptanceOutcome[] }> {
    clock += 1_000;
    const now = clock;
    const group = shapes.map((shape) => request(shape, now));
    const generalPath = (store: Store) => runInTransaction(store, (trx) => commitAcceptances(trx, 'postgres', group, now));
    const inOneStatement = await commitAcceptancesInOneStatement(viaStatement.store, group, now);
    const outcomes = inOneStatement ?? (await generalPath(viaStatement.store));
    expect(outcomes).toEqual(await generalPath(viaGeneralPath.store));
    expect(await snapshot(viaStatement.store)).toEqual(await snapshot(viaGeneralPath.store));
    return { inOneStatement: inOneStatement !== null, outcomes };
  }

  it('commits a group in which everything fits, writing what the general path writes', async () => {
    const { inOneStatement, outcomes } = await commitBothWays([
      { workspaceId: CAPPED, messages: 1 },
      { workspaceId: RICH, messages: 1 },
      { workspaceId: RICH, messages: 3, refused: 2, enforce: true, key: 'batch-key' },
      { workspaceId: RICH, messages: 0, refused: 2, enforce: true },
      { workspaceId: RICH, messages: 1, key: 'expired-key' },
      { workspaceId: CAPPED, messages: 1 },
    ]);
    expect(inOneStatement).toBe(true);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'accepted']);
    const records = await viaStatement.store.db.selectFrom('idempotency_records').select(['idempotency_key', 'request_hash']).where('workspace_id', '=', RICH).orderBy('idempotency_key').execute();
    expect(records).toEqual([
      { idempotency_key: 'batch-key', request_hash: 'hash-batch-key' },
      { idempotency_key: 'expired-key', request_hash: 'hash-expired-key' },
      { idempotency_key: 'live-key', request_hash: 'old' },
    ]);
  });

  it('leaves a group to the general path when a wallet cannot pay for its whole share, and only that request is refused', async () => {
    const { inOneStatement, outcomes } = await commitBothWays([
      { workspaceId: POOR, messages: 4, enforce: true },
      { workspaceId: RICH, messages: 2 },
      { workspaceId: POOR, messages: 8, enforce: true },
      { workspaceId: POOR, messages: 6, enforce: true },
    ]);
    expect(inOneStatement).toBe(false);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['accepted', 'accepted', 'insufficient_balance', 'accepted']);
  });

  it('leaves a group to the general path when an enforced quota does not cover every message', async () => {
    const reserved = Number((await viaGeneralPath.store.db.selectFrom('quota_reservations').select('reserved').where('oa_id', '=', 'oa_rich').executeTakeFirstOrThrow()).reserved);
    const fits = await commitBothWays([{ workspaceId: RICH, messages: 3, enforce: true, dailyQuota: reserved + 3 }]);
    expect(fits.inOneStatement).toBe(true);
    // Single sends are not refused by the quota (only counted); the batch after them gets what is left.
    const cut = await commitBothWays([
      { workspaceId: RICH, messages: 1, dailyQuota: reserved + 5 },
      { workspaceId: RICH, messages: 3, enforce: true, dailyQuota: reserved + 5 },
    ]);
    expect(cut.inOneStatement).toBe(false);
    expect(cut.outcomes[1]).toMatchObject({ kind: 'accepted', result: { acceptedCount: 1 } });
    const countedOnly = await commitBothWays([{ workspaceId: RICH, messages: 2, dailyQuota: reserved }]);
    expect(countedOnly.inOneStatement).toBe(true);
  });

  it('leaves a group to the general path at the account cap', async () => {
    // CAPPED has 2 of its 5 messages used by the first group.
    const { inOneStatement, outcomes } = await commitBothWays([
      { workspaceId: CAPPED, messages: 2 },
      { workspaceId: CAPPED, messages: 2 },
    ]);
    expect(inOneStatement).toBe(false);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['accepted', 'message_cap_reached']);
  });

  it('leaves a group to the general path when a key has a live record, or two requests share a key', async () => {
    const live = await commitBothWays([
      { workspaceId: RICH, messages: 1, key: 'live-key' },
      { workspaceId: RICH, messages: 1 },
    ]);
    expect(live.inOneStatement).toBe(false);
    expect(live.outcomes.map((outcome) => outcome.kind)).toEqual(['idempotency_conflict', 'accepted']);
    const shared = await commitBothWays([{ workspaceId: RICH, messages: 1, key: 'shared-key' }, { workspaceId: RICH, messages: 1 }]);
    expect(shared.inOneStatement).toBe(true);
    const replayed = await commitBothWays([{ workspaceId: RICH, messages: 1, key: 'shared-key' }]);
    expect(replayed.inOneStatement).toBe(false);
    expect(replayed.outcomes[0]!.kind).toBe('idempotency_conflict');
  });

  it('leaves the first group of a new day to the general path, which creates its quota row; the next one fits', async () => {
    const first = await commitBothWays([{ workspaceId: RICH, messages: 1, day: NEXT_DAY }]);
    expect(first.inOneStatement).toBe(false);
    const second = await commitBothWays([{ workspaceId: RICH, messages: 2, enforce: true, day: NEXT_DAY }]);
    expect(second.inOneStatement).toBe(true);
  });

  it('agrees with the general path on random groups over all three wallets', async () => {
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    await sql`UPDATE workspaces SET balance = ${60 * PRICE} WHERE id = ${POOR}`.execute(viaStatement.store.db);
    await sql`UPDATE workspaces SET balance = ${60 * PRICE} WHERE id = ${POOR}`.execute(viaGeneralPath.store.db);
    const counts = { inOneStatement: 0, generalPath: 0 };
    for (let round = 0; round < 40; round += 1) {
      const shapes = Array.from({ length: 1 + random(6) }, (): RequestShape => {
        const workspaceId = [RICH, POOR, CAPPED][random(3)]!;
        const enforce = random(2) === 0;
        return { workspaceId, messages: random(5), refused: random(2), enforce, dailyQuota: 150 + random(100), ...(random(4) === 0 && { key: `key-${round}-${random(1000)}` }) };
      });
      const { inOneStatement } = await commitBothWays(shapes);
      counts[inOneStatement ? 'inOneStatement' : 'generalPath'] += 1;
    }
    expect(counts.inOneStatement).toBeGreaterThan(5);
    expect(counts.generalPath).toBeGreaterThan(5);
  });

  it("inserts a group's messages before it locks the workspace's quota and wallet rows, so two groups of one workspace insert at once", async () => {
    clock += 1_000;
    const now = clock;
    const group = [request({ workspaceId: RICH, messages: 2, enforce: true }, now)];
    const firstMessage = (group[0]!.recipients[0] as { message: MessageRow }).message;
    const client = async () => {
      const connection = new pg.Client({ connectionString: viaStatement.url });
      await connection.connect();
      return connection;
    };
    const [inserting, locking] = await Promise.all([client(), client()]);
    try {
      // Another transaction holds an uncommitted row with the group's first id: the statement's
      // insert waits for it, and whatever the statement has locked by then stays locked meanwhile.
      await inserting.query('BEGIN');
      await inserting.query(
        `INSERT INTO messages (id, workspace_id, api_key_id, tracking_id, mode, source, template_id, oa_id, template_data, price, created_at)
         VALUES ($1, $2, 'key_1', 'held', 'plain', 'api', 'tpl_1', $3, '{}', 0, 0)`,
        [firstMessage.id, RICH, firstMessage.oa_id],
      );
      const committing = commitAcceptancesInOneStatement(viaStatement.store, group, now);
      for (let waited = 0; ; waited += 1) {
        const { rows } = await locking.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH%'");
        if (rows[0]!.n === 1) break;
        if (waited > 200) throw new Error('the statement never waited on the held row');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await locking.query('BEGIN');
      await locking.query('SELECT 1 FROM quota_reservations WHERE oa_id = $1 AND day = $2 FOR UPDATE NOWAIT', [firstMessage.oa_id, DAY]);
      await locking.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [RICH]);
      await locking.query('ROLLBACK');
      await inserting.query('ROLLBACK');
      const outcomes = await committing;
      expect(outcomes).not.toBeNull();
      expect(outcomes).toEqual(await runInTransaction(viaGeneralPath.store, (trx) => commitAcceptances(trx, 'postgres', group, now)));
      expect(await snapshot(viaStatement.store)).toEqual(await snapshot(viaGeneralPath.store));
    } finally {
      await Promise.all([inserting.end(), locking.end()]);
    }
  });

  it('lets only one of two groups of one workspace committing at once spend its last balance, and keeps none of the other', async () => {
    for (const store of [viaStatement.store, viaGeneralPath.store]) await sql`UPDATE workspaces SET balance = ${10 * PRICE} WHERE id = ${POOR}`.execute(store.db);
    clock += 1_000;
    const now = clock;
    const groups = [[request({ workspaceId: POOR, messages: 6, enforce: true }, now)], [request({ workspaceId: POOR, messages: 6, enforce: true }, now)]];
    const results = await Promise.all(groups.map((group) => commitAcceptancesInOneStatement(viaStatement.store, group, now)));
    expect(results.filter((result) => result !== null)).toHaveLength(1);
    const winner = results[0] === null ? 1 : 0;
    // The group that did not fit goes the general way, as the writer sends it: refused, 402.
    const loserOutcomes = await runInTransaction(viaStatement.store, (trx) => commitAcceptances(trx, 'postgres', groups[1 - winner]!, now));
    expect(loserOutcomes[0]!.kind).toBe('insufficient_balance');
    for (const index of [winner, 1 - winner]) await runInTransaction(viaGeneralPath.store, (trx) => commitAcceptances(trx, 'postgres', groups[index]!, now));
    expect(await snapshot(viaStatement.store)).toEqual(await snapshot(viaGeneralPath.store));
    const wallet = await viaStatement.store.db.selectFrom('workspaces').select(['balance']).where('id', '=', POOR).executeTakeFirstOrThrow();
    expect(Number(wallet.balance)).toBe(4 * PRICE);
  });
});
