/**
 * The statements that follow a key change (revoked or its webhook URL removed: its pending delivery
 * reports are cancelled; a new URL: they are readdressed) must find the key's pending reports
 * through webhook_deliveries_by_workspace, searched by the key's workspace and the pending status,
 * never by reading the whole outbox (30 days of every workspace's reports) nor every workspace's
 * pending reports. Explained like the list plans (list-plans.test.ts): SQLite's EXPLAIN QUERY
 * PLAN, PostgreSQL's EXPLAIN with sequential scans priced out, on a few thousand reports with no
 * statistics. Then both statements run, and touch exactly the key's pending reports.
 */
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { insertRows } from '../../src/store/bulk-insert.ts';
import { migrate } from '../../src/store/migrate.ts';
import type { WebhookDeliveryRow, WebhookDeliveryStatus } from '../../src/store/schema.ts';
import {
  cancelPendingDeliveries,
  cancelStatement,
  readdressPendingDeliveries,
  readdressStatement,
} from '../../src/store/webhook-deliveries.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

const INDEX = 'webhook_deliveries_by_workspace';
const NOW = Date.UTC(2026, 10, 24, 5, 0, 0);
const WORKSPACES = ['ws_a', 'ws_b', 'ws_c'];
const KEYS_PER_WORKSPACE = 2;
const REPORTS = 3000;
const STATUSES: WebhookDeliveryStatus[] = ['delivered', 'delivered', 'delivered', 'failed', 'pending', 'cancelled'];

function report(index: number): WebhookDeliveryRow {
  const workspace = WORKSPACES[index % WORKSPACES.length]!;
  const key = `key_${workspace}_${Math.floor(index / WORKSPACES.length) % KEYS_PER_WORKSPACE}`;
  const status = STATUSES[index % STATUSES.length]!;
  const createdAt = NOW - (REPORTS - index) * 1000;
  return {
    id: `dlv_plan_${String(index).padStart(6, '0')}`,
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
    delivered_at: status === 'delivered' ? createdAt + 100 : null,
    failed_at: status === 'failed' ? createdAt + 100 : null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** The index the statement searches the outbox with (and by which columns), and whether it reads the table whole. */
async function planOf(store: Store, statement: RawBuilder<unknown>): Promise<{ search: string | null; fullScan: boolean; text: string }> {
  const query = statement.compile(store.db);
  return store.db.connection().execute(async (db) => {
    await sql`BEGIN`.execute(db);
    try {
      if (store.dialect === 'sqlite') {
        const rows = (await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]))).rows.map((row) => row.detail);
        const search = rows.map((detail) => /^SEARCH webhook_deliveries USING INDEX (\S+) \(workspace_id=\? AND status=\?\)$/.exec(detail)?.[1]).find(Boolean) ?? null;
        return { search, fullScan: rows.some((detail) => /^SCAN webhook_deliveries\b/.test(detail)), text: rows.join('\n') };
      }
      await sql`SET LOCAL enable_seqscan = off`.execute(db);
      const result = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${query.sql}`, [...query.parameters]));
      const root = result.rows[0]!['QUERY PLAN'][0].Plan;
      let search: string | null = null;
      let fullScan = false;
      const visit = (node: PlanNode) => {
        if (node['Node Type'] === 'Seq Scan') fullScan = true;
        const condition = node['Index Cond'] ?? '';
        if (node['Index Name'] !== undefined && /\bworkspace_id\b/.test(condition) && /\bstatus\b/.test(condition)) search = node['Index Name'];
        for (const child of node.Plans ?? []) visit(child);
      };
      visit(root);
      return { search, fullScan, text: JSON.stringify(root, null, 1) };
    } finally {
      await sql`ROLLBACK`.execute(db);
    }
  });
}

describe.each(STORE_KINDS)('key change query plans (%s)', (kind) => {
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
    const plan = await planOf(store, statement());
    expect(plan.fullScan, plan.text).toBe(false);
    expect(plan.search, plan.text).toBe(INDEX);
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
});
