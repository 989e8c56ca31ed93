/**
 * Sends and refunds racing for the same wallet and the same daily-quota rows: single sends,
 * cancels of queued scheduled messages and failures the dispatcher refunds, all at once. They must
 * all lock wallet and quota rows in one order: on PostgreSQL no transaction may deadlock (each
 * deadlock aborts a transaction, retries cost throughput and, often enough, a send answered 500),
 * and on both stores the money must come out exact.
 */
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { STORE_KINDS, startTestGateway, type TestGateway, type TestResponse } from '../harness.ts';
import { DAY_MS, vietnamWallClock } from '../api/helpers.ts';
import { inParallel, readBooks } from './support.ts';
import { waitFor as waitUntil } from '../wait-for.ts';

const OTP_TEMPLATE = '250002';
const OTP_PRICE = DEMO_TEMPLATES.find((template) => template.template_id === OTP_TEMPLATE)!.price;
const TOP_UP = 10_000_000;
/** Bounded work: a few seconds on either store. */
const SCHEDULED_TO_CANCEL = 300;
const SCHEDULED_SENDS = 300;
const FAILING_SENDS = 150;
const LANE_CONCURRENCY = 12;

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

/** Deadlocks PostgreSQL has detected in one database since its statistics began. */
async function deadlocksIn(databaseUrl: string): Promise<number> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ deadlocks: string }>('SELECT deadlocks FROM pg_stat_database WHERE datname = $1', [name]);
    return Number(result.rows[0]?.deadlocks ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * A server process reports its statistics when it goes idle (at most once a second) or exits. Waits
 * until every connection but ours to the database is gone, so what they counted has been reported.
 */
async function waitForConnectionsToClose(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await waitFor(
      async () => Number((await client.query<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])).rows[0]!.count),
      (count) => count === 0,
      'the gateway connections to close',
    );
  } finally {
    await client.end();
  }
}

describe.each(STORE_KINDS)('sends and refunds racing for one wallet (%s)', (kind) => {
  let simulator: RunningSimulator;
  let gateway: TestGateway;
  let stopped = false;
  let workspaceId: string;
  let apiKey: string;

  beforeAll(async () => {
    simulator = await startSimulator({ eventsUrl: null });
    gateway = await startTestGateway(kind, {
      worker: true,
      env: { ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url, TMS_DISPATCH_POLL_MS: '10', TMS_DISPATCH_BACKOFF_MS: '20', ZNS_TIMEOUT_MS: '5000' },
    });
    workspaceId = (await gateway.admin('POST', '/workspaces', { name: 'refund race' })).body.id;
    expect((await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: TOP_UP })).status).toBe(201);
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key;
  });
  afterAll(async () => {
    if (stopped) await gateway?.database.drop();
    else await gateway?.close();
    await simulator?.close();
  });

  const send = (body: Record<string, unknown>) =>
    gateway.request('POST', '/api/v1/messages/send', { key: apiKey, body: { template_id: OTP_TEMPLATE, template_data: { otp: '123456' }, ...body } });

  it('never deadlocks or answers 500, and the wallet and ledger come out exact', { timeout: 180_000 }, async () => {
    // Every scheduled message, racing or to be cancelled, counts against the same sender account and day.
    const sendAt = vietnamWallClock(Date.now() + DAY_MS);
    const toCancel = await inParallel(Array.from({ length: SCHEDULED_TO_CANCEL }, (_, index) => index), LANE_CONCURRENCY, async (index) => {
      const response = await send({ phone: `0913${String(index).padStart(6, '0')}`, send_at: sendAt });
      expect(response.status, response.text).toBe(202);
      return response.body.msg_id as string;
    });
    const databaseUrl = gateway.config.database.kind === 'postgres' ? gateway.config.database.url : null;
    const deadlocksBefore = databaseUrl ? await deadlocksIn(databaseUrl) : 0;

    const answers: { what: string; response: TestResponse }[] = [];
    const record = (what: string) => (response: TestResponse) => {
      answers.push({ what, response });
      return response;
    };
    const [cancels, scheduled, failing] = await Promise.all([
      inParallel(toCancel, LANE_CONCURRENCY, (id) => gateway.request('POST', `/api/v1/messages/${id}/cancel`, { key: apiKey }).then(record('cancel'))),
      inParallel(Array.from({ length: SCHEDULED_SENDS }, (_, index) => index), LANE_CONCURRENCY, (index) =>
        send({ phone: `0914${String(index).padStart(6, '0')}`, send_at: sendAt }).then(record('scheduled send')),
      ),
      // '012' is not a phone number: the platform refuses it at once and the dispatcher refunds it.
      inParallel(Array.from({ length: FAILING_SENDS }, (_, index) => index), LANE_CONCURRENCY, () => send({ phone: '012' }).then(record('failing send'))),
    ]);

    const unexpected = answers.filter(({ what, response }) => response.status !== (what === 'cancel' ? 200 : 202));
    expect(unexpected.map(({ what, response }) => `${what}: ${response.status} ${response.text}`)).toEqual([]);
    const failingIds = failing.map((response) => response.body.msg_id as string);
    const scheduledIds = scheduled.map((response) => response.body.msg_id as string);
    expect(cancels.every((response) => response.body.cancelled === true)).toBe(true);

    // Wait for the dispatcher to fail (and refund) every failing send.
    const store = gateway.runtime.store;
    await waitFor(
      async () => (await store.db.selectFrom('message_states').select('id').where('id', 'in', failingIds).where('status', '=', 'failed').execute()).length,
      (count) => count === FAILING_SENDS,
      'every failing send to be failed and refunded',
    );

    const books = await readBooks(store.db, workspaceId);
    // Every 202 has its message; every cancelled message is gone.
    expect(new Set(books.messageIds)).toEqual(new Set([...scheduledIds, ...failingIds]));
    const charges = books.ledger.filter((entry) => entry.kind === 'charge');
    const refunds = books.ledger.filter((entry) => entry.kind === 'refund');
    const chargedMessages = charges.reduce((sum, entry) => sum + entry.message_count, 0);
    const refundedMessages = refunds.reduce((sum, entry) => sum + entry.message_count, 0);
    expect(chargedMessages).toBe(SCHEDULED_TO_CANCEL + SCHEDULED_SENDS + FAILING_SENDS);
    expect(refundedMessages).toBe(SCHEDULED_TO_CANCEL + FAILING_SENDS);
    expect(new Set(refunds.map((entry) => entry.reference))).toEqual(new Set([...toCancel, ...failingIds]));
    // balance = top-up − charges + refunds, to the dong, in the wallet and in its ledger.
    const expectedBalance = TOP_UP - OTP_PRICE * SCHEDULED_SENDS;
    expect(books.workspace.balance).toBe(expectedBalance);
    expect(books.ledger.reduce((sum, entry) => sum + entry.amount, 0)).toBe(expectedBalance);
    expect(books.workspace.messages_accepted).toBe(SCHEDULED_SENDS);
    const wallet = await gateway.admin('GET', `/workspaces/${workspaceId}/wallet?limit=1`);
    expect(wallet.body.balance).toBe(expectedBalance);
    // The day's quota reservation holds exactly the scheduled messages still queued.
    const reservations = await store.db.selectFrom('quota_reservations').select(['day', 'reserved']).where('oa_id', '=', DEMO_SENDER_ACCOUNT.oa_id).execute();
    expect(reservations.reduce((sum, row) => sum + row.reserved, 0)).toBe(SCHEDULED_SENDS);

    if (databaseUrl) {
      stopped = true;
      await gateway.service.stop();
      await waitForConnectionsToClose(databaseUrl);
      expect(await deadlocksIn(databaseUrl)).toBe(deadlocksBefore);
    }
  });
});
