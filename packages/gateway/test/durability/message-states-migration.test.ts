/**
 * Migration 0013 moves each message's state out of `messages` into `message_states`. A store that
 * holds messages in every state when it runs must read the same messages afterwards, field for
 * field, and its queue must go on: the queued message is claimed, the sent one still awaits its
 * delivery, the lists' status filter finds them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/database.ts';
import { findMessagesAwaitingDelivery } from '../../src/store/delivery-checks.ts';
import { claimDueMessages } from '../../src/store/dispatch-queue.ts';
import { findMessage, listMessages } from '../../src/store/messages.ts';
import type { MessageRow, MessageStatus } from '../../src/store/schema.ts';
import { STORE_KINDS } from '../harness.ts';
import { openStoreBeforeMigration, type StoreBeforeMigration } from './support.ts';

const WORKSPACE = 'ws_upgrade';
const NOW = Date.UTC(2026, 10, 28, 3, 0, 0);

function messageIn(status: MessageStatus, index: number, changes: Partial<MessageRow> = {}): MessageRow {
  const createdAt = NOW - 3_600_000 + index * 1000;
  return {
    id: `msg_upgrade_${index}_${status}`,
    workspace_id: WORKSPACE,
    api_key_id: 'key_upgrade',
    tracking_id: `order-${index}`,
    status,
    mode: 'plain',
    phone: '84912345678',
    carrier: 'Viettel',
    rsa_phone: null,
    source: 'api',
    template_id: '250001',
    oa_id: '4318269720189301001',
    template_data: '{"otp":"123456"}',
    price: 300,
    quota_day: '2026-11-28',
    provider_msg_id: null,
    error_code: null,
    error_message: null,
    error_reason: null,
    due_at: createdAt,
    scheduled_at: null,
    attempts: 0,
    lease_expires_at: null,
    unconfirmed_since: null,
    sent_at: null,
    status_checked_at: null,
    delivered_at: null,
    failed_at: null,
    created_at: createdAt,
    updated_at: createdAt,
    ...changes,
  };
}

const BEFORE_UPGRADE: MessageRow[] = [
  messageIn('queued', 1),
  messageIn('queued', 2, { due_at: NOW + 86_400_000, scheduled_at: NOW + 86_400_000 }),
  messageIn('sending', 3, { attempts: 1, lease_expires_at: NOW + 30_000, unconfirmed_since: NOW - 5000, mode: 'rsa', phone: null, rsa_phone: 'c2VhbGVk' }),
  messageIn('sent', 4, { attempts: 1, provider_msg_id: 'zns-4', sent_at: NOW - 600_000, status_checked_at: NOW - 60_000 }),
  messageIn('delivered', 5, { attempts: 1, provider_msg_id: 'zns-5', sent_at: NOW - 700_000, delivered_at: NOW - 690_000 }),
  messageIn('failed', 6, { attempts: 3, error_code: -124, error_message: 'Phone number is invalid', error_reason: 'invalid_phone', failed_at: NOW - 500_000 }),
  messageIn('delivered', 7, { attempts: 1, provider_msg_id: 'zns-7', sent_at: NOW - 800_000, delivered_at: NOW - 790_000, phone: null, template_data: 'null' }),
];

/** Inserts messages the way every migration before 0013 stored them: one row, state and all. */
async function insertBeforeUpgrade(store: Store, rows: readonly MessageRow[]): Promise<void> {
  for (const row of rows) {
    const columns = Object.keys(row);
    const values = columns.map((column) => row[column as keyof MessageRow]);
    await sql`INSERT INTO messages (${sql.raw(columns.join(', '))}) VALUES (${sql.join(values)})`.execute(store.db);
  }
}

describe.each(STORE_KINDS)('migration 0013_message_states on a store with messages (%s)', (kind) => {
  let before: StoreBeforeMigration;
  let store: Store;
  let applied: string[];

  beforeAll(async () => {
    before = await openStoreBeforeMigration(kind, 13, NOW);
    store = before.store;
    await insertBeforeUpgrade(store, BEFORE_UPGRADE);
    applied = await before.upgrade();
  }, 60_000);
  afterAll(async () => {
    await before?.close();
  });

  it('applies 0013 and the migrations after it, and keeps every message, field for field', async () => {
    expect(applied[0]).toBe('0013_message_states');
    for (const message of BEFORE_UPGRADE) {
      const read = await findMessage(store.db, WORKSPACE, message.id);
      expect(read).toEqual(message);
    }
  });

  it("drops the state's columns from messages, so nothing can read a stale copy", async () => {
    await expect(sql`SELECT status FROM messages`.execute(store.db)).rejects.toThrow(/status/);
  });

  it('goes on with the queue: lists by status, claims the due message, still checks the sent one', async () => {
    const failed = await listMessages(store, WORKSPACE, { status: 'failed' }, { limit: 10, offset: 0 });
    expect(failed.map((message) => message.id)).toEqual(['msg_upgrade_6_failed']);
    const claimed = await claimDueMessages(store, { now: NOW, limit: 10, leaseMs: 30_000 });
    expect(claimed.map((message) => [message.id, message.attempts, message.template_data])).toEqual([['msg_upgrade_1_queued', 1, '{"otp":"123456"}']]);
    const awaiting = await findMessagesAwaitingDelivery(store.db, { sentAfter: NOW - 3_600_000, sentBefore: NOW, checkedBefore: NOW, limit: 10 });
    expect(awaiting).toEqual([{ id: 'msg_upgrade_4_sent', oa_id: '4318269720189301001', provider_msg_id: 'zns-4' }]);
  });
});
