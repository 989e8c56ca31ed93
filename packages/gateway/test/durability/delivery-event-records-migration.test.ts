/**
 * Migration 0017 removes the rows earlier versions kept of every delivery event: the message's own
 * state makes those events idempotent now. A template status event's row stays, since it is what
 * stops the platform's retry of an old status change from undoing a newer one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformEventRow } from '../../src/store/schema.ts';
import { STORE_KINDS } from '../harness.ts';
import { openStoreBeforeMigration, type StoreBeforeMigration } from './support.ts';

const NOW = Date.UTC(2026, 10, 30, 3, 0, 0);
const OA_ID = '4318269720189301001';

const deliveryEventRow = (index: number): PlatformEventRow => ({
  event_key: `user_received_message:msg_upgrade_${index}:zns-${index}`,
  event_name: 'user_received_message',
  oa_id: OA_ID,
  message_id: `msg_upgrade_${index}`,
  received_at: NOW - index * 1000,
});

const TEMPLATE_STATUS_ROW: PlatformEventRow = {
  event_key: `change_template_status:${OA_ID}:250001:1767200401000`,
  event_name: 'change_template_status',
  oa_id: OA_ID,
  message_id: null,
  received_at: NOW - 60_000,
};

describe.each(STORE_KINDS)('migration 0017_no_delivery_event_records (%s)', (kind) => {
  let before: StoreBeforeMigration;
  let applied: string[];

  beforeAll(async () => {
    before = await openStoreBeforeMigration(kind, 17, NOW);
    await before.store.db.insertInto('platform_events').values([deliveryEventRow(1), deliveryEventRow(2), TEMPLATE_STATUS_ROW, deliveryEventRow(3)]).execute();
    applied = await before.upgrade();
  }, 60_000);
  afterAll(async () => {
    await before?.close();
  });

  it('removes the delivery events and keeps the template status event', async () => {
    expect(applied[0]).toBe('0017_no_delivery_event_records');
    const rows = await before.store.db.selectFrom('platform_events').selectAll().execute();
    expect(rows.map((row) => ({ ...row, received_at: Number(row.received_at) }))).toEqual([TEMPLATE_STATUS_ROW]);
  });
});
