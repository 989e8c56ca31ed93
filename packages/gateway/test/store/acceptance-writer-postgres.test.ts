/**
 * The acceptance writer on PostgreSQL after a group that did not fit in one statement. That
 * statement inserts its messages before it finds out and rolls them back, so a workspace out of
 * money would pay for it, and leave dead rows, on every request: for a second after a refusal its
 * groups go the general way, which inserts nothing it refuses.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { createAcceptanceWriter } from '../../src/infrastructure/acceptance-writer.ts';
import type { AcceptanceRequest } from '../../src/store/acceptances.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import type { MessageRow } from '../../src/store/schema.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

const WORKSPACE = 'ws_short_of_money';
const OA = 'oa_short_of_money';
const DAY = '2026-11-30';
const PRICE = 100;

let messageNumber = 0;

function message(now: number): MessageRow {
  messageNumber += 1;
  const id = `msg_${String(messageNumber).padStart(8, '0')}`;
  const nulls = { rsa_phone: null, provider_msg_id: null, error_code: null, error_message: null, error_reason: null, scheduled_at: null };
  const unsent = { lease_expires_at: null, unconfirmed_since: null, sent_at: null, status_checked_at: null, delivered_at: null, failed_at: null };
  return {
    ...nulls,
    ...unsent,
    id,
    workspace_id: WORKSPACE,
    api_key_id: 'key_1',
    tracking_id: id,
    status: 'queued',
    mode: 'plain',
    phone: `849${String(messageNumber).padStart(8, '0')}`,
    carrier: 'viettel',
    source: 'api',
    template_id: 'tpl_1',
    oa_id: OA,
    template_data: '{"order":"#1"}',
    price: PRICE,
    quota_day: DAY,
    due_at: now,
    attempts: 0,
    created_at: now,
    updated_at: now,
  };
}

/** A batch of `count` recipients, more than the wallet pays for. */
function batch(count: number, now: number): AcceptanceRequest {
  return {
    workspaceId: WORKSPACE,
    recipients: Array.from({ length: count }, () => ({ echo: {}, message: message(now) })),
    scheduledAt: null,
    quota: { oaId: OA, day: DAY, dailyQuota: 1_000_000, enforce: true, overQuotaRefusal: 'daily_quota_exceeded: no quota left' },
    idempotency: null,
  };
}

describe.skipIf(!STORE_KINDS.includes('postgres'))('acceptance writer after a refusal (postgres)', () => {
  let database: TestDatabase;
  let store: Store;

  beforeEach(async () => {
    database = await createTestDatabase('postgres');
    store = openStore(parseConfig(gatewayEnvironment(database)).database);
    await migrate(store, 0);
    await store.db
      .insertInto('workspaces')
      .values({ id: WORKSPACE, name: WORKSPACE, status: 'active', balance: 10 * PRICE, message_cap: null, messages_accepted: 0, is_demo: 0, created_at: 0, updated_at: 0 })
      .execute();
    await store.db.insertInto('quota_reservations').values({ oa_id: OA, day: DAY, reserved: 0 }).execute();
  });
  afterEach(async () => {
    await store?.close();
    await database?.drop();
  });

  /** The messages table's size on disk: a statement that inserts and rolls back still grows it. */
  async function messagesTableBytes(): Promise<number> {
    const { rows } = await sql<{ bytes: string }>`SELECT pg_relation_size('messages') AS bytes`.execute(store.db);
    return Number(rows[0]!.bytes);
  }

  it("sends a workspace's groups the general way for a second after one did not fit, so they insert nothing they take back", async () => {
    let now = 10_000_000;
    const writer = createAcceptanceWriter(store, () => now);
    const before = await messagesTableBytes();
    expect((await writer.submit(batch(150, now))).kind).toBe('insufficient_balance');
    const afterFirst = await messagesTableBytes();
    expect(afterFirst).toBeGreaterThan(before);
    now += 500;
    expect((await writer.submit(batch(150, now))).kind).toBe('insufficient_balance');
    expect(await messagesTableBytes()).toBe(afterFirst);
    now += 1_000;
    expect((await writer.submit(batch(150, now))).kind).toBe('insufficient_balance');
    expect(await messagesTableBytes()).toBeGreaterThan(afterFirst);
    await writer.drain();
  });
});
