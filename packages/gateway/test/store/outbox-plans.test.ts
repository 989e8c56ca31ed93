/**
 * The delivery-report outbox's rare statements must reach their rows through an index, never by
 * reading the whole outbox (30 days of every workspace's reports):
 * - after a key change (revoked or its webhook URL removed: its pending reports are cancelled; a
 *   new URL: they are readdressed), the key's pending reports through webhook_deliveries_by_workspace,
 *   searched by the key's workspace and the pending status (not every workspace's pending reports);
 * - the retention purge, the oldest finished reports through the primary key, searched by id;
 * - a workspace's newest reports of every status (the console's and the operator's list), the
 *   newest of each status through webhook_deliveries_by_workspace, merged (not every report the
 *   workspace kept, sorted for one page).
 * - every workspace's newest reports (the operator's list), through the primary key in its order,
 *   and from a time by searching it (not the whole outbox sorted for one page).
 * Explained like the list plans (list-plans.test.ts): SQLite's EXPLAIN QUERY PLAN, PostgreSQL's
 * EXPLAIN with sequential scans priced out, on a few thousand reports with no statistics. Then the
 * statements run, and touch exactly the reports they are for.
 */
import type { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { insertRows } from '../../src/store/bulk-insert.ts';
import { migrate } from '../../src/store/migrate.ts';
import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryRow, type WebhookDeliveryStatus } from '../../src/store/schema.ts';
import {
  cancelPendingDeliveries,
  cancelStatement,
  listDeliveries,
  listDeliveriesQuery,
  purgeableDeliveriesQuery,
  purgeFinishedDeliveries,
  readdressPendingDeliveries,
  readdressStatement,
} from '../../src/store/webhook-deliveries.ts';
import { sortableIdFloor } from '../../src/lib/ids.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';
import { explainStatement } from '../query-plans.ts';

const BY_WORKSPACE = 'webhook_deliveries_by_workspace';
/** Every status a report can have: the list of a workspace's reports reads each through the index. */
const STATUSES_KNOWN = WEBHOOK_DELIVERY_STATUSES.length;
const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 10, 24, 5, 0, 0);
const WORKSPACES = ['ws_a', 'ws_b', 'ws_c'];
const KEYS_PER_WORKSPACE = 2;
const REPORTS = 3000;
const STATUSES: WebhookDeliveryStatus[] = ['delivered', 'delivered', 'delivered', 'failed', 'pending', 'cancelled'];

function report(index: number): WebhookDeliveryRow {
  const workspace = WORKSPACES[index % WORKSPACES.length]!;
  const key = `key_${workspace}_${Math.floor(index / WORKSPACES.length) % KEYS_PER_WORKSPACE}`;
  const status = STATUSES[index % STATUSES.length]!;
  // Spread over 60 days, oldest first; finished a minute after creation.
  const createdAt = NOW - Math.floor(((REPORTS - index) * 60 * DAY_MS) / REPORTS);
  return {
    // createSortableId's layout with the creation time: that function would give these the time of
    // the last id the process made (it keeps a process's ids in order).
    id: `${sortableIdFloor('dlv', createdAt)}${String(index).padStart(16, '0')}`,
    message_id: `msg_plan_${String(index).padStart(6, '0')}`,
    workspace_id: workspace,
    api_key_id: key,
    url: 'https://hooks.example.com/old',
    body: '{}',
    status,
    attempts: status === 'pending' ? 0 : 1,
    attempts_at_redelivery: 0,
    next_attempt_at: createdAt,
    lease_expires_at: null,
    last_status_code: status === 'delivered' ? 200 : null,
    last_error: null,
    delivered_at: status === 'delivered' ? createdAt + 60_000 : null,
    failed_at: status === 'failed' ? createdAt + 60_000 : null,
    created_at: createdAt,
    updated_at: status === 'pending' ? createdAt : createdAt + 60_000,
  };
}

/** How a statement reaches the outbox's rows: the indexes it searches, with their conditions, and whether it reads the table whole. */
async function planOf(store: Store, query: CompiledQuery): Promise<{ searches: { index: string; condition: string }[]; fullScan: boolean; text: string }> {
  const { sqliteLines, postgresNodes, text } = await explainStatement(store, query);
  const searches = [
    ...sqliteLines.flatMap((detail) => {
      const found = /^SEARCH webhook_deliveries USING (?:COVERING )?INDEX (\S+) \((.*)\)$/.exec(detail);
      return found ? [{ index: found[1]!, condition: found[2]! }] : [];
    }),
    ...postgresNodes.flatMap((node) => (node['Index Name'] === undefined ? [] : [{ index: node['Index Name'], condition: node['Index Cond'] ?? '' }])),
  ];
  const fullScan = sqliteLines.some((detail) => /^SCAN webhook_deliveries\b/.test(detail)) || postgresNodes.some((node) => node['Node Type'] === 'Seq Scan');
  return { searches, fullScan, text };
}

describe.each(STORE_KINDS)('outbox query plans (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  const key = { workspaceId: 'ws_b', apiKeyId: 'key_ws_b_1' };

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = openStore(parseConfig(gatewayEnvironment(database)).database);
    await migrate(store);
    const rows = Array.from({ length: REPORTS }, (_, index) => report(index));
    for (let start = 0; start < rows.length; start += 500) await insertRows(store.db, store.dialect, 'webhook_deliveries', rows.slice(start, start + 500));
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it.each([
    ['readdressing', () => readdressStatement({ ...key, url: 'https://hooks.example.com/new', now: NOW })],
    ['cancelling', () => cancelStatement({ ...key, reason: 'cancelled: the API key was revoked', now: NOW })],
  ])('%s a key\'s pending reports searches its workspace\'s pending ones by index', async (_name, statement) => {
    const plan = await planOf(store, statement().compile(store.db));
    expect(plan.fullScan, plan.text).toBe(false);
    const search = plan.searches.find((found) => /\bworkspace_id\b/.test(found.condition) && /\bstatus\b/.test(found.condition));
    expect(search?.index, plan.text).toBe(BY_WORKSPACE);
  });

  it('the retention purge searches the oldest reports by id', async () => {
    const plan = await planOf(store, purgeableDeliveriesQuery(store.db, { before: NOW - 30 * DAY_MS, limit: 1000 }).compile());
    expect(plan.fullScan, plan.text).toBe(false);
    expect(plan.searches.some((found) => /\bid\b/.test(found.condition)), plan.text).toBe(true);
  });

  it('lists a workspace\'s newest reports of every status through the index, one status at a time', async () => {
    const query = listDeliveriesQuery(store.db, { workspaceId: 'ws_a', limit: 50, offset: 100, since: NOW - 45 * DAY_MS }).compile();
    const plan = await planOf(store, query);
    expect(plan.fullScan, plan.text).toBe(false);
    const byWorkspaceAndStatus = plan.searches.filter((found) => found.index === BY_WORKSPACE && /\bworkspace_id\b/.test(found.condition) && /\bstatus\b/.test(found.condition));
    expect(byWorkspaceAndStatus, plan.text).toHaveLength(STATUSES_KNOWN);
  });

  it('lists a workspace\'s reports of every status newest first, page by page, as one sorted list would', async () => {
    const all = await store.db.selectFrom('webhook_deliveries').select(['id', 'created_at']).where('workspace_id', '=', 'ws_a').execute();
    const sorted = all.sort((a, b) => Number(b.created_at) - Number(a.created_at) || (a.id < b.id ? 1 : -1)).map((row) => row.id);
    const pages: string[] = [];
    for (let offset = 0; offset < sorted.length + 7; offset += 7) {
      pages.push(...(await listDeliveries(store.db, { workspaceId: 'ws_a', limit: 7, offset })).map((row) => row.id));
    }
    expect(pages).toEqual(sorted);
    const since = NOW - 20 * DAY_MS;
    const recent = await listDeliveries(store.db, { workspaceId: 'ws_a', since, until: NOW, limit: 500, offset: 0 });
    expect(recent.map((row) => row.id)).toEqual(sorted.filter((id) => Number(all.find((row) => row.id === id)!.created_at) >= since));
  });

  it('lists every workspace\'s newest reports in the primary key\'s order, sorting nothing', async () => {
    const { sqliteLines, postgresNodes, text } = await explainStatement(store, listDeliveriesQuery(store.db, { limit: 50, offset: 100 }).compile());
    const throughPrimaryKey = sqliteLines.some((detail) => detail.includes('sqlite_autoindex_webhook_deliveries_1')) || postgresNodes.some((node) => node['Index Name'] === 'webhook_deliveries_pkey');
    expect(throughPrimaryKey, text).toBe(true);
    const sorts = sqliteLines.some((detail) => detail.includes('TEMP B-TREE')) || postgresNodes.some((node) => /Sort$/.test(node['Node Type']));
    expect(sorts, text).toBe(false);
  });

  it('lists every workspace\'s reports created since a time by searching the primary key from that time\'s ids', async () => {
    const plan = await planOf(store, listDeliveriesQuery(store.db, { since: NOW - 10 * DAY_MS, limit: 50, offset: 0 }).compile());
    expect(plan.fullScan, plan.text).toBe(false);
    expect(plan.searches.some((found) => /\bid\b/.test(found.condition)), plan.text).toBe(true);
  });

  it('lists every workspace\'s reports newest first, by status and by time, page by page, as one sorted list would', async () => {
    const all = await store.db.selectFrom('webhook_deliveries').select(['id', 'status', 'created_at']).execute();
    const newestFirst = all.sort((a, b) => Number(b.created_at) - Number(a.created_at) || (a.id < b.id ? 1 : -1));
    const pagesOf = async (filter: { status?: WebhookDeliveryStatus; since?: number; until?: number }) => {
      const ids: string[] = [];
      for (let offset = 0; ; offset += 97) {
        const page = await listDeliveries(store.db, { ...filter, limit: 97, offset });
        ids.push(...page.map((row) => row.id));
        if (page.length < 97) return ids;
      }
    };
    expect(await pagesOf({})).toEqual(newestFirst.map((row) => row.id));
    expect(await pagesOf({ status: 'failed' })).toEqual(newestFirst.filter((row) => row.status === 'failed').map((row) => row.id));
    const since = NOW - 20 * DAY_MS;
    const until = NOW - 5 * DAY_MS;
    const inWindow = newestFirst.filter((row) => Number(row.created_at) >= since && Number(row.created_at) < until);
    expect(inWindow.length).toBeGreaterThan(97);
    expect(await pagesOf({ since, until })).toEqual(inWindow.map((row) => row.id));
  });

  it('readdresses, then cancels, exactly the key\'s pending reports', async () => {
    const pendingOfKey = Array.from({ length: REPORTS }, (_, index) => report(index)).filter(
      (row) => row.status === 'pending' && row.workspace_id === key.workspaceId && row.api_key_id === key.apiKeyId,
    );
    expect(pendingOfKey.length).toBeGreaterThan(0);
    expect(await readdressPendingDeliveries(store.db, { ...key, url: 'https://hooks.example.com/new', now: NOW })).toBe(pendingOfKey.length);
    expect(await cancelPendingDeliveries(store.db, { ...key, reason: 'cancelled: the API key was revoked', now: NOW + 1 })).toBe(pendingOfKey.length);
    const changed = await store.db.selectFrom('webhook_deliveries').select(['id', 'url', 'status']).where('url', '=', 'https://hooks.example.com/new').execute();
    expect(new Set(changed.map((row) => row.id))).toEqual(new Set(pendingOfKey.map((row) => row.id)));
    expect(changed.every((row) => row.status === 'cancelled')).toBe(true);
    const stillPending = await store.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('count')).where('status', '=', 'pending').executeTakeFirstOrThrow();
    expect(Number(stillPending.count)).toBe(REPORTS / STATUSES.length - pendingOfKey.length);
  });

  it('purges every finished report last changed before the cutoff, in batches, and nothing else', async () => {
    const before = NOW - 30 * DAY_MS;
    const remaining = await store.db.selectFrom('webhook_deliveries').select(['id', 'status', 'updated_at']).execute();
    const purgeable = remaining.filter((row) => row.status !== 'pending' && Number(row.updated_at) < before);
    expect(purgeable.length).toBeGreaterThan(300);
    let purged = 0;
    for (let batch = 300; batch === 300; ) {
      batch = await purgeFinishedDeliveries(store, { before, limit: 300 });
      purged += batch;
    }
    expect(purged).toBe(purgeable.length);
    const left = await store.db.selectFrom('webhook_deliveries').select('id').execute();
    expect(new Set(left.map((row) => row.id))).toEqual(new Set(remaining.filter((row) => !purgeable.includes(row)).map((row) => row.id)));
  });
});
