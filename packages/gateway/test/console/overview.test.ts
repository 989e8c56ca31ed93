/**
 * GET /console/api/overview: balance, today's messages by status, seven Vietnam days of delivery
 * outcomes, quotas and the latest failures. The gateway runs on a clock set to 10:00 in Vietnam, so
 * "today" does not move under the test; messages are moved between states and days by writing
 * their rows (setup the public API cannot express without the platform).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectMessageRecords } from '../../src/store/message-records.ts';
import { insertMessages } from '../message-rows.ts';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { DAY_MS, expectStatus, queueOne, setMessageCreatedAt, setMessageStatus } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';

/** 2026-11-24 10:00 in Vietnam. */
const START = Date.parse('2026-11-24T03:00:00.000Z');
const started = Date.now();
/** Moved forward by a test that needs time to pass. */
let skipped = 0;
const clock = () => START + (Date.now() - started) + skipped;

describe.each(STORE_KINDS)('console overview (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let viewer: ConsoleSession;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { clock });
    ws = await seedWorkspace(gateway, { price: 300, balance: 100_000, dailyQuota: 500 });
    viewer = await consoleUserIn(gateway, ws.workspaceId, 'viewer');
  });
  afterAll(async () => gateway?.close());

  const overview = async (session = viewer) => {
    const response = await session.request('GET', '/console/api/overview');
    expectStatus(response, 200);
    return response.body;
  };
  /** Queues a message, then puts it in `status`, created `daysAgo` Vietnam days before today (at `hour` Vietnam time). */
  const message = async (status: 'queued' | 'sending' | 'sent' | 'delivered' | 'failed', daysAgo = 0, hour = 8, workspace = ws): Promise<string> => {
    const id = await queueOne(gateway, workspace);
    if (status !== 'queued') await setMessageStatus(gateway, id, status);
    const createdAt = Math.round(Date.parse('2026-11-24T00:00:00.000Z') - 7 * 3_600_000 + hour * 3_600_000 - daysAgo * DAY_MS);
    await setMessageCreatedAt(gateway, id, createdAt);
    return id;
  };

  it('shows zeros and no rate for a workspace that has sent nothing', async () => {
    const empty = await seedWorkspace(gateway, { balance: 7_000 });
    const body = await overview(await consoleUserIn(gateway, empty.workspaceId, 'viewer'));
    expect(body.balance).toBe(7_000);
    expect(body.messages_today).toEqual({ queued: 0, sending: 0, sent: 0, delivered: 0, failed: 0 });
    expect(body.delivery_rate.map((day: { day: string }) => day.day)).toEqual([
      '2026-11-18',
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
      '2026-11-24',
    ]);
    expect(body.delivery_rate.every((day: { sent: number; delivered: number; failed: number; rate: number | null }) => day.sent + day.delivered + day.failed === 0 && day.rate === null)).toBe(true);
    expect(body.latest_failures).toEqual([]);
  });

  it("counts today's messages by status, and each day's outcomes for seven Vietnam days", async () => {
    // Today (Vietnam): 2 queued, 1 sending, 1 sent, 3 delivered, 1 failed. 00:30 today counts as today.
    await message('queued');
    await message('queued', 0, 0.5);
    await message('sending');
    await message('sent');
    for (let index = 0; index < 3; index += 1) await message('delivered');
    await message('failed');
    // Yesterday at 23:30 Vietnam time (16:30 UTC, the same UTC date as today's early hours): yesterday.
    await message('delivered', 1, 23.5);
    await message('failed', 1, 23.5);
    // Six days ago: the oldest day shown; seven days ago: not shown.
    await message('delivered', 6);
    await message('delivered', 7);
    // Another workspace's messages are never counted.
    const other = await seedWorkspace(gateway);
    await message('delivered', 0, 8, other);

    const body = await overview();
    expect(body.balance).toBe(100_000 - 300 * 12);
    expect(body.messages_today).toEqual({ queued: 2, sending: 1, sent: 1, delivered: 3, failed: 1 });
    const byDay = Object.fromEntries(body.delivery_rate.map((day: { day: string }) => [day.day, day]));
    expect(byDay['2026-11-24']).toEqual({ day: '2026-11-24', sent: 1, delivered: 3, failed: 1, rate: 0.75 });
    expect(byDay['2026-11-23']).toEqual({ day: '2026-11-23', sent: 0, delivered: 1, failed: 1, rate: 0.5 });
    expect(byDay['2026-11-18']).toEqual({ day: '2026-11-18', sent: 0, delivered: 1, failed: 0, rate: 1 });
    expect(byDay['2026-11-17']).toBeUndefined();
    expect(body.delivery_rate.at(-1).day).toBe('2026-11-24');
  });

  it("shows each sender account's quota today, with its reset at the next Vietnam midnight", async () => {
    const body = await overview();
    expect(body.quotas).toEqual([
      { oa_id: ws.oaId, name: expect.any(String), daily_quota: 500, used: expect.any(Number), remaining: expect.any(Number), resets_at: '2026-11-24T17:00:00.000Z' },
    ]);
    expect(body.quotas[0].used + body.quotas[0].remaining).toBe(500);
    expect(body.quotas[0].used).toBeGreaterThan(0);
  });

  it('lists the ten newest failures, newest first, as message records', async () => {
    const failures: string[] = [];
    // Today from 09:00, a minute apart: newer than every failure made above.
    for (let index = 0; index < 12; index += 1) failures.push(await message('failed', 0, 9 + index / 60));
    const body = await overview();
    expect(body.latest_failures.map((record: { msg_id: string }) => record.msg_id)).toEqual(failures.slice(2).reverse());
    expect(body.latest_failures[0]).toMatchObject({ status: 'failed', source: 'api', template_id: ws.templateId, phone: '84912345678', created_at: '2026-11-24T02:11:00.000Z' });
  });

  it("keeps a busy workspace's counts for ten seconds, and counts again after", async () => {
    const busy = await seedWorkspace(gateway);
    const queued = await queueOne(gateway, busy);
    // 50,000 delivered copies of it, written directly: sending that many would take minutes.
    const row = await selectMessageRecords(gateway.runtime.store.db).where('m.id', '=', queued).executeTakeFirstOrThrow();
    const now = clock();
    const rows = Array.from({ length: 50_000 }, (_, index) => ({ ...row, id: `${row.id}_${index}`, tracking_id: `busy-${index}`, status: 'delivered' as const, created_at: now - index }));
    await insertMessages(gateway.runtime.store.db, rows);
    const session = await consoleUserIn(gateway, busy.workspaceId, 'viewer');
    expect((await overview(session)).messages_today).toEqual({ queued: 1, sending: 0, sent: 0, delivered: 50_000, failed: 0 });
    await setMessageStatus(gateway, queued, 'failed');
    expect((await overview(session)).messages_today).toMatchObject({ queued: 1, failed: 0 });
    skipped += 10_001;
    expect((await overview(session)).messages_today).toMatchObject({ queued: 0, failed: 1 });
  });

  it('keeps the counts of days that ended more than a day ago for ten minutes; today is always counted afresh', async () => {
    const quiet = await seedWorkspace(gateway);
    const session = await consoleUserIn(gateway, quiet.workspaceId, 'viewer');
    const old = await message('sent', 3, 9, quiet);
    await message('sent', 0, 9, quiet);
    const dayOf = (body: { delivery_rate: { day: string; sent: number; delivered: number }[] }, day: string) => body.delivery_rate.find((entry) => entry.day === day)!;
    const before = await overview(session);
    expect(dayOf(before, '2026-11-21')).toMatchObject({ sent: 1, delivered: 0 });
    await setMessageStatus(gateway, old, 'delivered');
    await queueOne(gateway, quiet);
    const today = await overview(session);
    expect(dayOf(today, '2026-11-21')).toMatchObject({ sent: 1, delivered: 0 });
    expect(today.messages_today).toMatchObject({ queued: 1, sent: 1 });
    skipped += 10 * 60_000 + 1;
    expect(dayOf(await overview(session), '2026-11-21')).toMatchObject({ sent: 0, delivered: 1 });
  });
});
