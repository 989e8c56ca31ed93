/**
 * The retention sweep's query plan: it must reach the messages still holding personal data through
 * the partial index messages_holding_personal_data, searched by created_at, never by reading the
 * whole table (which grows with every message ever sent, erased or not). Explained like the list
 * plans (list-plans.test.ts): SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN with sequential
 * scans priced out, on a table of a few thousand messages with no statistics.
 */
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import { eraseExpiredPersonalData, expiredPersonalDataQuery } from '../../src/store/personal-data.ts';
import type { Database, MessageRow, MessageStatus } from '../../src/store/schema.ts';
import { insertMessages } from '../message-rows.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';
import { explainStatement } from '../query-plans.ts';

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 10, 24, 5, 0, 0);
const MESSAGES = 3000;
const STATUSES: MessageStatus[] = ['delivered', 'delivered', 'failed', 'sent', 'queued', 'sending'];
const INDEX = 'messages_holding_personal_data';

/** Messages over 180 days, a third of them erased already. */
async function fillMessages(db: Kysely<Database>): Promise<void> {
  const rows: MessageRow[] = Array.from({ length: MESSAGES }, (_, index) => {
    const createdAt = NOW - 180 * DAY_MS + Math.floor((index * 180 * DAY_MS) / MESSAGES);
    const status = STATUSES[index % STATUSES.length]!;
    const erased = index % 3 === 0 && status !== 'queued' && status !== 'sending';
    return {
      id: `msg_plan_${String(index).padStart(6, '0')}`,
      workspace_id: 'ws_plans',
      api_key_id: 'key_plans',
      tracking_id: `order-${index}`,
      status,
      mode: 'plain',
      phone: erased ? null : `849${String(1_000_000 + index).padStart(8, '0')}`,
      carrier: 'Viettel',
      rsa_phone: null,
      source: 'api',
      template_id: '250001',
      oa_id: '431826970',
      template_data: erased ? 'null' : '{"otp":"123456"}',
      price: 300,
      quota_day: null,
      provider_msg_id: null,
      error_code: null,
      error_message: null,
      error_reason: null,
      due_at: createdAt,
      scheduled_at: null,
      attempts: 1,
      lease_expires_at: status === 'sending' ? createdAt + 60_000 : null,
      unconfirmed_since: null,
      sent_at: status === 'queued' || status === 'sending' ? null : createdAt + 500,
      status_checked_at: null,
      delivered_at: status === 'delivered' ? createdAt + 5000 : null,
      failed_at: status === 'failed' ? createdAt + 800 : null,
      created_at: createdAt,
      updated_at: createdAt,
    };
  });
  await insertMessages(db, rows);
}

/** The indexes the plan searches messages with, and whether it reads the table whole. */
async function planOf(store: Store, query: CompiledQuery): Promise<{ searches: string[]; fullScan: boolean; text: string }> {
  const { sqliteLines, postgresNodes, text } = await explainStatement(store, query);
  // SQLite names the tables by their aliases in the statement (m: messages, s: message_states).
  const searches = [
    ...sqliteLines.flatMap((detail) => /^SEARCH (?:messages|m) USING (?:COVERING )?INDEX (\S+) \(created_at<\?\)$/.exec(detail)?.[1] ?? []),
    ...postgresNodes.flatMap((node) => (node['Index Name'] !== undefined && /\bcreated_at\b/.test(node['Index Cond'] ?? '') ? [node['Index Name']] : [])),
  ];
  const fullScan =
    sqliteLines.some((detail) => /^SCAN (?:messages|message_states|m|s)\b/.test(detail)) ||
    postgresNodes.some((node) => node['Node Type'] === 'Seq Scan' && (node['Relation Name'] === 'messages' || node['Relation Name'] === 'message_states'));
  return { searches, fullScan, text };
}

describe.each(STORE_KINDS)('personal data retention query plan (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = openStore(parseConfig(gatewayEnvironment(database)).database);
    await migrate(store);
    await fillMessages(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('finds expired messages through the partial index, by created_at', async () => {
    const query = expiredPersonalDataQuery(store.dialect, { finishedBefore: NOW - 90 * DAY_MS, limit: 1000 }).compile(store.db);
    const plan = await planOf(store, query);
    expect(plan.fullScan, plan.text).toBe(false);
    expect(plan.searches, plan.text).toContain(INDEX);
  });

  it('erases only finished messages past the cutoff, in bounded batches, and never twice', async () => {
    const finishedBefore = NOW - 90 * DAY_MS;
    const expected = await store.db
      .selectFrom('messages as m')
      .innerJoin('message_states as s', 's.id', 'm.id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('m.template_data', '<>', 'null')
      .where('s.status', 'in', ['sent', 'delivered', 'failed'])
      .where(sql<boolean>`COALESCE(s.delivered_at, s.failed_at, s.sent_at, s.updated_at) < ${finishedBefore}`)
      .executeTakeFirstOrThrow();
    const first = await eraseExpiredPersonalData(store, { finishedBefore, limit: 100 });
    expect(first).toBe(100);
    let total = first;
    let batch = first;
    while (batch === 100) {
      batch = await eraseExpiredPersonalData(store, { finishedBefore, limit: 100 });
      total += batch;
    }
    expect(total).toBe(Number(expected.count));
    expect(await eraseExpiredPersonalData(store, { finishedBefore, limit: 100 })).toBe(0);
    const inFlight = await store.db.selectFrom('messages as m').innerJoin('message_states as s', 's.id', 'm.id').select('m.phone').where('s.status', 'in', ['queued', 'sending']).execute();
    expect(inFlight.length).toBeGreaterThan(0);
    expect(inFlight.every((row) => row.phone !== null)).toBe(true);
  });
});
