/**
 * Personal data and retention: the workers' retention sweep (TMS_MESSAGE_RETENTION_DAYS) on a real
 * runtime whose clock the test moves, and the operator's purge of a workspace's personal data over
 * /admin/v1 and `tms admin`. Erased messages still read through /api/v1 with phone null.
 * SQLite always; PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectMessageRecords } from '../../src/store/message-records.ts';
import type { MessageRow } from '../../src/store/schema.ts';
import { maintenanceTasks } from '../../src/workers/maintenance.ts';
import { DAY_MS, expectError, expectStatus } from '../api/helpers.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { runAdminJson } from './processes.ts';

const START = Date.UTC(2026, 10, 24, 3, 0, 0);
type Finished = 'sent' | 'delivered' | 'failed';

describe.each(STORE_KINDS)('personal data and retention (%s)', (kind) => {
  let gateway: TestGateway;
  let now = START;
  let phoneCounter = 0;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { clock: () => now });
  });
  afterAll(async () => gateway?.close());

  const db = () => gateway.runtime.store.db;
  const nextPhone = () => `8491${String(2_000_000 + (phoneCounter += 1)).padStart(7, '0')}`;

  /** Accepts one message now (the runtime's clock) and answers its id. */
  async function accept(ws: SeededWorkspace, phone: string): Promise<string> {
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone, template_data: VALID_DATA } });
    expectStatus(response, 202);
    return response.body.msg_id as string;
  }

  /** What the platform's answers would have written: the message finished at `at`. */
  async function finish(id: string, status: Finished | 'sending', at: number): Promise<void> {
    const times = {
      sent_at: status === 'sending' ? null : at,
      delivered_at: status === 'delivered' ? at : null,
      failed_at: status === 'failed' ? at : null,
      lease_expires_at: status === 'sending' ? at + 60_000 : null,
    };
    await db().updateTable('message_states').set({ status, ...times, updated_at: at }).where('id', '=', id).execute();
  }

  /** The whole message as stored: its row of messages with its state. */
  const row = (id: string): Promise<MessageRow> =>
    selectMessageRecords(db()).where('m.id', '=', id).executeTakeFirstOrThrow();
  const read = (ws: SeededWorkspace, id: string) => gateway.request('GET', `/api/v1/messages/${id}`, { key: ws.apiKey });
  const runRetentionSweep = async () => {
    const task = maintenanceTasks(gateway.runtime).find((candidate) => candidate.name === 'erase_personal_data');
    expect(task, 'the workers run the retention sweep').toBeDefined();
    await task!.run(() => undefined, new AbortController().signal);
  };

  it('erases phones and template data of messages finished longer ago than the retention, and nothing else', async () => {
    expect(gateway.config.messageRetentionDays).toBe(90);
    now = START;
    const ws = await seedWorkspace(gateway);
    const delivered = await accept(ws, nextPhone());
    const failed = await accept(ws, nextPhone());
    const sentNoReport = await accept(ws, nextPhone());
    const queued = await accept(ws, nextPhone());
    const sending = await accept(ws, nextPhone());
    const lateFinish = await accept(ws, nextPhone());
    await finish(delivered, 'delivered', START + 5_000);
    await finish(failed, 'failed', START + 1_000);
    await finish(sentNoReport, 'sent', START + 1_000);
    await finish(sending, 'sending', START + 1_000);
    // Accepted with the others but finished 20 days later (a scheduled send): its retention counts from then.
    await finish(lateFinish, 'delivered', START + 20 * DAY_MS);
    const before = await row(delivered);

    now = START + 89 * DAY_MS;
    await runRetentionSweep();
    for (const id of [delivered, failed, sentNoReport]) expect((await row(id)).phone).not.toBeNull();

    now = START + 91 * DAY_MS;
    await runRetentionSweep();
    for (const id of [delivered, failed, sentNoReport]) {
      const erased = await row(id);
      expect(erased).toMatchObject({ phone: null, rsa_phone: null, template_data: 'null' });
      // The record stays: ids, status, times, money, the carrier (a network, not a person).
      expect(erased).toMatchObject({ id, workspace_id: ws.workspaceId, tracking_id: id, price: before.price, created_at: before.created_at, carrier: before.carrier });
    }
    expect((await row(delivered)).delivered_at).toBe(START + 5_000);
    for (const id of [queued, sending, lateFinish]) expect((await row(id)).template_data).toBe(JSON.stringify(VALID_DATA));

    // Erased records read as before, with phone null: one by id, in lists, by status.
    const record = await read(ws, delivered);
    expectStatus(record, 200);
    expect(record.body).toMatchObject({ msg_id: delivered, status: 'delivered', phone: null, carrier: before.carrier, template_id: ws.templateId });
    const list = await gateway.request('GET', '/api/v1/messages?status=delivered', { key: ws.apiKey });
    expectStatus(list, 200);
    expect(list.body.messages.find((message: { msg_id: string }) => message.msg_id === delivered)).toMatchObject({ phone: null });
    const support = await gateway.admin('GET', `/messages/${delivered}`);
    expectStatus(support, 200);
    expect(support.body).toMatchObject({ phone: null, status: 'delivered' });

    now = START + 111 * DAY_MS;
    await runRetentionSweep();
    expect((await row(lateFinish)).phone).toBeNull();
    for (const id of [queued, sending]) expect((await row(id)).phone).not.toBeNull();
  });

  it('keeps personal data forever with TMS_MESSAGE_RETENTION_DAYS=0', async () => {
    let clock = START;
    const keeping = await startTestGateway(kind, { clock: () => clock, env: { TMS_MESSAGE_RETENTION_DAYS: '0' } });
    try {
      const ws = await seedWorkspace(keeping);
      const response = await keeping.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912000111', template_data: VALID_DATA } });
      expectStatus(response, 202);
      const id = response.body.msg_id as string;
      await keeping.runtime.store.db.updateTable('message_states').set({ status: 'delivered', sent_at: START, delivered_at: START }).where('id', '=', id).execute();
      clock = START + 3650 * DAY_MS;
      await maintenanceTasks(keeping.runtime).find((task) => task.name === 'erase_personal_data')!.run(() => undefined, new AbortController().signal);
      expect((await keeping.runtime.store.db.selectFrom('messages').select('phone').where('id', '=', id).executeTakeFirstOrThrow()).phone).toBe('84912000111');
    } finally {
      await keeping.close();
    }
  });

  it("purges one phone's finished messages of one workspace on request, with their finished reports, and logs it without the phone", async () => {
    now = Date.UTC(2027, 2, 1, 3, 0, 0);
    const ws = await seedWorkspace(gateway);
    const neighbour = await seedWorkspace(gateway);
    const phone = nextPhone();
    const other = nextPhone();
    const mineDelivered = await accept(ws, phone);
    const mineReportPending = await accept(ws, phone);
    const mineQueued = await accept(ws, phone);
    const someoneElse = await accept(ws, other);
    const neighbours = await accept(neighbour, phone);
    for (const id of [mineDelivered, mineReportPending, someoneElse, neighbours]) await finish(id, 'delivered', now + 5_000);
    const report = {
      message_id: mineDelivered,
      workspace_id: ws.workspaceId,
      api_key_id: ws.apiKeyId,
      url: 'https://shop.example.vn/hooks',
      body: JSON.stringify({ message_id: mineDelivered, to: phone }),
      attempts: 1,
      attempts_at_redelivery: 0,
      next_attempt_at: now,
      lease_expires_at: null,
      last_status_code: 200,
      last_error: null,
      delivered_at: now,
      failed_at: null,
      created_at: now,
      updated_at: now,
    };
    await db()
      .insertInto('webhook_deliveries')
      .values([
        { ...report, id: 'dlv_purge_delivered', status: 'delivered' },
        { ...report, id: 'dlv_purge_pending', message_id: mineReportPending, status: 'pending', delivered_at: null },
      ])
      .execute();

    // Any form the API accepts names the phone.
    const local = `0${phone.slice(2)}`;
    const purge = await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, { phone: local });
    expectStatus(purge, 200);
    expect(purge.body).toEqual({ workspace_id: ws.workspaceId, scope: 'one_phone', before: null, erased: 2, in_flight: 1, reports_deleted: 1 });
    expect(purge.text).not.toContain(phone.slice(2));
    expect(await row(mineDelivered)).toMatchObject({ phone: null, template_data: 'null', status: 'delivered' });
    expect((await row(mineQueued)).phone).toBe(phone);
    expect((await row(someoneElse)).phone).toBe(other);
    expect((await row(neighbours)).phone).toBe(phone);
    // A pending report still goes out; the webhook retention removes it once finished.
    const reports = await db().selectFrom('webhook_deliveries').select('id').where('message_id', 'in', [mineDelivered, mineReportPending]).execute();
    expect(reports.map((entry) => entry.id)).toEqual(['dlv_purge_pending']);
    expectStatus(await read(ws, mineDelivered), 200);

    const activity = await gateway.admin('GET', `/workspaces/${ws.workspaceId}/activity`);
    expectStatus(activity, 200);
    const entry = activity.body.entries.find((candidate: { action: string }) => candidate.action === 'workspace.purge_personal_data');
    expect(entry).toBeDefined();
    expect(entry.actor).toMatchObject({ kind: 'operator' });
    expect(JSON.stringify(activity.body)).not.toContain(phone.slice(2));
    expect(entry.after).toMatchObject({ scope: 'one phone', erased: 2, in_flight: 1, reports_deleted: 1 });

    // Again: nothing left to erase; the queued one still waits for its send.
    const again = await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, { phone });
    expect(again.body).toMatchObject({ erased: 0, in_flight: 1, reports_deleted: 0 });
  });

  it('purges a whole workspace, or what was created before a time', async () => {
    now = Date.UTC(2027, 3, 1, 3, 0, 0);
    const ws = await seedWorkspace(gateway);
    const older = await accept(ws, nextPhone());
    now += DAY_MS;
    const newer = await accept(ws, nextPhone());
    for (const id of [older, newer]) await finish(id, 'failed', now);

    const cut = await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, { before: new Date(now - 1000).toISOString() });
    expectStatus(cut, 200);
    expect(cut.body).toMatchObject({ scope: 'workspace', before: new Date(now - 1000).toISOString(), erased: 1, in_flight: 0 });
    expect((await row(older)).phone).toBeNull();
    expect((await row(newer)).phone).not.toBeNull();

    const all = await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, {});
    expect(all.body).toMatchObject({ scope: 'workspace', before: null, erased: 1 });
    expect((await row(newer)).phone).toBeNull();
  });

  it('refuses an unknown workspace, a bad time, an unknown field and a caller without the operator token', async () => {
    expectError(await gateway.admin('POST', '/workspaces/ws_nope/personal-data/purge', {}), 'workspace_not_found');
    const ws = await seedWorkspace(gateway);
    expectError(await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, { before: 'last week' }), 'invalid_date_range');
    expectError(await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, { phones: ['0912345678'] }), 'invalid_request');
    expectError(await gateway.admin('POST', `/workspaces/${ws.workspaceId}/personal-data/purge`, { phone: ' ' }), 'invalid_request');
    const anonymous = await gateway.request('POST', `/admin/v1/workspaces/${ws.workspaceId}/personal-data/purge`, { body: {} });
    expectError(anonymous, 'unauthenticated');
    const withApiKey = await gateway.request('POST', `/admin/v1/workspaces/${ws.workspaceId}/personal-data/purge`, { key: ws.apiKey, body: {} });
    expectError(withApiKey, 'unauthenticated');
  });

  it('purges through `tms admin workspaces purge-personal-data`', async () => {
    now = Date.now();
    const ws = await seedWorkspace(gateway);
    const phone = nextPhone();
    const id = await accept(ws, phone);
    await finish(id, 'delivered', now);
    const env = {
      ...gateway.database.env,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
      TMS_LOG_LEVEL: 'silent',
    };
    const result = await runAdminJson(['workspaces', 'purge-personal-data', ws.workspaceId, '--phone', `+${phone}`], env);
    expect(result).toEqual({ workspace_id: ws.workspaceId, scope: 'one_phone', before: null, erased: 1, in_flight: 0, reports_deleted: 0 });
    expect(await row(id)).toMatchObject({ phone: null, template_data: 'null' });
  }, 60_000);
});
