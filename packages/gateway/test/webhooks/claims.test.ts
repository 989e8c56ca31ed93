/**
 * The outbox claim, straight on the store: two workers claiming at once never hold the same
 * delivery (PostgreSQL SKIP LOCKED, SQLite's write lock), a dead worker's claim falls due again
 * when its lease runs out, and a worker whose claim expired cannot overwrite the newer claim's
 * outcome. Times are passed in, so nothing here waits. Outbox rows are written directly (test
 * setup: they are normally written by a delivery event). SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, pingStore, type Store } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import type { WebhookDeliveryRow } from '../../src/store/schema.ts';
import { claimDueDeliveries, findDelivery, listAttempts, recordDeliveryOutcomes } from '../../src/store/webhook-deliveries.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

const T0 = 1_800_000_000_000;
let rowCounter = 0;

function outboxRow(overrides: Partial<WebhookDeliveryRow> = {}): WebhookDeliveryRow {
  rowCounter += 1;
  const id = `dlv_test${String(rowCounter).padStart(8, '0')}`;
  return {
    id,
    message_id: `msg_${id}`,
    workspace_id: 'ws_test',
    api_key_id: 'key_test',
    url: 'http://hooks.example.com/dlr',
    body: `{"message_id":"msg_${id}"}`,
    status: 'pending',
    attempts: 0,
    attempts_at_redelivery: 0,
    next_attempt_at: T0,
    lease_expires_at: null,
    last_status_code: null,
    last_error: null,
    delivered_at: null,
    failed_at: null,
    created_at: T0,
    updated_at: T0,
    ...overrides,
  };
}

describe.each(STORE_KINDS)('webhook outbox claims (%s)', (kind) => {
  let database: TestDatabase;
  let first: Store;
  let second: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = parseConfig(gatewayEnvironment(database));
    first = openStore(config.database);
    // Two pools on PostgreSQL. SQLite serialises writers with its file lock across processes; in one
    // process a second connection would block the event loop waiting for the first, so both
    // "workers" share the one connection (its claims interleave between statements).
    second = kind === 'postgres' ? openStore(config.database) : first;
    await migrate(first);
  });
  afterAll(async () => {
    if (second !== first) await second?.close();
    await first?.close();
    await database?.drop();
  });

  it('never hands one delivery to two workers claiming at the same time', async () => {
    const rows = Array.from({ length: 600 }, () => outboxRow({ url: 'http://race.example.com/dlr' }));
    for (let start = 0; start < rows.length; start += 100) await first.db.insertInto('webhook_deliveries').values(rows.slice(start, start + 100)).execute();
    const claimAll = async (store: Store) => {
      const ids: string[] = [];
      for (;;) {
        const claimed = await claimDueDeliveries(store, { now: T0 + 1, limit: 25, leaseMs: 60_000, skipUrls: ['http://hooks.example.com/dlr'] });
        if (claimed.length === 0) return ids;
        ids.push(...claimed.map((row) => row.id));
      }
    };
    // Both connected before the race: a pool that still has to connect (PostgreSQL) would give the
    // other worker time to claim everything alone.
    await Promise.all([pingStore(first), pingStore(second)]);
    const [a, b] = await Promise.all([claimAll(first), claimAll(second)]);
    const all = [...a!, ...b!];
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(rows.map((row) => row.id).sort());
    expect(a!.length).toBeGreaterThan(0);
    expect(b!.length).toBeGreaterThan(0);
  });

  it('skips the URLs it is told to, and claims nothing that is not due', async () => {
    const busy = outboxRow({ url: 'http://busy.example.com/x' });
    const later = outboxRow({ url: 'http://later.example.com/x', next_attempt_at: T0 + 10_000 });
    const free = outboxRow({ url: 'http://free.example.com/x' });
    await first.db.insertInto('webhook_deliveries').values([busy, later, free]).execute();
    const claimed = await claimDueDeliveries(first, { now: T0 + 5, limit: 100, leaseMs: 60_000, skipUrls: ['http://busy.example.com/x', 'http://hooks.example.com/dlr'] });
    expect(claimed.map((row) => row.id)).toEqual([free.id]);
    expect(claimed[0]).toMatchObject({ attempts: 1, lease_expires_at: T0 + 5 + 60_000, body: free.body });
  });

  it('gives a dead worker\'s claim to the next worker after the lease, and ignores the dead worker\'s late outcome', async () => {
    const row = outboxRow({ url: 'http://lease.example.com/x' });
    await first.db.insertInto('webhook_deliveries').values(row).execute();
    const only = { limit: 10, skipUrls: ['http://hooks.example.com/dlr', 'http://free.example.com/x', 'http://busy.example.com/x'] };
    const [dead] = await claimDueDeliveries(first, { ...only, now: T0 + 10, leaseMs: 1000 });
    expect(dead).toMatchObject({ id: row.id, attempts: 1 });
    expect(await claimDueDeliveries(second, { ...only, now: T0 + 500, leaseMs: 1000 })).toEqual([]);
    const [next] = await claimDueDeliveries(second, { ...only, now: T0 + 1011, leaseMs: 1000 });
    expect(next).toMatchObject({ id: row.id, attempts: 2 });

    const attemptRow = (attempt: number, id: string) => ({ delivery_id: row.id, id, attempt, url: row.url, started_at: T0, latency_ms: 3, status_code: 200, error: null, outcome: 'delivered' as const });
    // The first worker wakes up and records its attempt: its lease is gone, the row is not touched.
    await recordDeliveryOutcomes(first, [{ kind: 'failed', claim: { id: row.id, leaseExpiresAt: dead!.lease_expires_at }, statusCode: 500, error: 'HTTP 500', attempt: { ...attemptRow(1, 'att_1'), status_code: 500, outcome: 'failed' } }], T0 + 1020);
    expect(await findDelivery(first.db, row.id)).toMatchObject({ status: 'pending', attempts: 2, lease_expires_at: next!.lease_expires_at });
    await recordDeliveryOutcomes(second, [{ kind: 'delivered', claim: { id: row.id, leaseExpiresAt: next!.lease_expires_at }, statusCode: 200, attempt: attemptRow(2, 'att_2') }], T0 + 1030);
    expect(await findDelivery(first.db, row.id)).toMatchObject({ status: 'delivered', attempts: 2, delivered_at: T0 + 1030, lease_expires_at: null, last_status_code: 200 });
    // Both attempts happened, so both are in the log.
    expect((await listAttempts(first.db, row.id)).map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
      [1, 'failed'],
      [2, 'delivered'],
    ]);
  });

  it('a released claim is due again at once and its attempt is not counted', async () => {
    const row = outboxRow({ url: 'http://release.example.com/x' });
    await first.db.insertInto('webhook_deliveries').values(row).execute();
    const only = { limit: 10, leaseMs: 60_000, skipUrls: ['http://hooks.example.com/dlr', 'http://free.example.com/x', 'http://busy.example.com/x'] };
    const [claimed] = await claimDueDeliveries(first, { ...only, now: T0 + 2000 });
    await recordDeliveryOutcomes(first, [{ kind: 'released', claim: { id: row.id, leaseExpiresAt: claimed!.lease_expires_at }, attempt: null }], T0 + 2001);
    expect(await findDelivery(first.db, row.id)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: T0 + 2001, lease_expires_at: null });
    const [again] = await claimDueDeliveries(first, { ...only, now: T0 + 2002 });
    expect(again).toMatchObject({ id: row.id, attempts: 1 });
  });
});
