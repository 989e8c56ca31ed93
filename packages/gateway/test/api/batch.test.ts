/** POST /api/v1/messages/batch: docs/api.md (batch, daily quota, money). */
import type { ErrorType } from '../../src/services/errors.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { DAY_MS, ISO_UTC_MS, expectError, expectStatus, listAll, nextVietnamMidnightText, putSenderAccount, putTemplate, unique, walletOf, workspaceOf } from './helpers.ts';

describe.each(STORE_KINDS)('POST /api/v1/messages/batch (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  const batch = (ws: SeededWorkspace, body: Record<string, unknown>, headers?: Record<string, string>) =>
    gateway.request('POST', '/api/v1/messages/batch', { key: ws.apiKey, body: { template_id: ws.templateId, ...body }, headers });
  const quotaOf = async (ws: SeededWorkspace) => {
    const response = await gateway.request('GET', `/api/v1/quota?oa_id=${ws.oaId}`, { key: ws.apiKey });
    expectStatus(response, 200);
    return response.body.quotas[0];
  };
  const recipients = (count: number, prefix = '09120000') =>
    Array.from({ length: count }, (_unused, index) => ({ phone: `${prefix}${String(index).padStart(2, '0')}`, template_data: VALID_DATA }));

  it('queues every recipient and answers accepted, total, scheduled_at and results in order', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
    const response = await batch(ws, {
      recipients: [
        { phone: '0912 345 678', template_data: VALID_DATA, tracking_id: 'b-1' },
        { phone: '+84 98-765-4321', template_data: { name: 'B', code: 'B2' } },
        { phone: '901234567', template_data: VALID_DATA, tracking_id: 'b-3' },
      ],
    });
    expectStatus(response, 202);
    expect(response.body).toEqual({
      accepted: 3,
      total: 3,
      scheduled_at: null,
      results: [
        { phone: '84912345678', msg_id: expect.stringMatching(/^msg_/), tracking_id: 'b-1', status: 'queued' },
        { phone: '84987654321', msg_id: expect.stringMatching(/^msg_/), tracking_id: expect.any(String), status: 'queued' },
        { phone: '84901234567', msg_id: expect.stringMatching(/^msg_/), tracking_id: 'b-3', status: 'queued' },
      ],
    });
    const [first, second, third] = response.body.results;
    expect(second.tracking_id).toBe(second.msg_id);
    expect(new Set([first.msg_id, second.msg_id, third.msg_id]).size).toBe(3);
    for (const [result, carrier] of [[first, 'Vinaphone'], [second, 'Viettel'], [third, 'Mobifone']] as const) {
      const record = await gateway.request('GET', `/api/v1/messages/${result.msg_id}`, { key: ws.apiKey });
      expectStatus(record, 200);
      expect(record.body).toMatchObject({ msg_id: result.msg_id, tracking_id: result.tracking_id, phone: result.phone, carrier, status: 'queued', source: 'api', template_id: ws.templateId, oa_id: ws.oaId, scheduled_at: null });
    }
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(10_000 - 900);
    expect(wallet.ledger[0]).toMatchObject({ kind: 'charge', amount: -900, balance_after: 9_100, message_count: 3 });
    expect((await workspaceOf(gateway, ws.workspaceId)).messages_used).toBe(3);
  });

  it('reports per-recipient errors in place and charges only the queued recipients', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
    const response = await batch(ws, {
      recipients: [
        { phone: '0912345678', template_data: VALID_DATA, tracking_id: 'ok-1' },
        { phone: '0912345679', template_data: { name: 'A' }, tracking_id: 'bad-data' },
        { template_data: VALID_DATA, tracking_id: 'no-phone' },
        { phone: '0912345680', template_data: { ...VALID_DATA, extra: 'x' } },
        { phone: '', template_data: VALID_DATA },
        { phone: '0912345681', template_data: { name: 'A', code: 'much-too-long-code' } },
        { phone: '0912345682', template_data: VALID_DATA },
        { phone: '0912345683' },
      ],
    });
    expectStatus(response, 202);
    expect(response.body.accepted).toBe(2);
    expect(response.body.total).toBe(8);
    const results = response.body.results;
    expect(results).toHaveLength(8);
    expect(results[0]).toEqual({ phone: '84912345678', msg_id: expect.any(String), tracking_id: 'ok-1', status: 'queued' });
    expect(results[1]).toEqual({ phone: '84912345679', tracking_id: 'bad-data', status: 'error', error: expect.stringMatching(/^invalid_template_data: .*code/) });
    expect(results[2]).toMatchObject({ tracking_id: 'no-phone', status: 'error', error: expect.stringMatching(/^missing_phone: \S/) });
    expect(results[2].msg_id).toBeUndefined();
    expect(results[3]).toEqual({ phone: '84912345680', status: 'error', error: expect.stringMatching(/^invalid_template_data: .*extra/) });
    expect(results[4]).toMatchObject({ status: 'error', error: expect.stringMatching(/^missing_phone: /) });
    expect(results[5]).toEqual({ phone: '84912345681', status: 'error', error: expect.stringMatching(/^invalid_template_data: .*code/) });
    expect(results[6]).toEqual({ phone: '84912345682', msg_id: expect.any(String), tracking_id: expect.any(String), status: 'queued' });
    expect(results[7]).toEqual({ phone: '84912345683', status: 'error', error: expect.stringMatching(/^invalid_template_data: /) });

    const stored = await listAll(gateway, ws);
    expect(stored.map((message) => message.msg_id).sort()).toEqual([results[0].msg_id, results[6].msg_id].sort());
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(10_000 - 600);
    expect(wallet.ledger[0]).toMatchObject({ kind: 'charge', amount: -600, message_count: 2 });
  });

  it('answers 202 with accepted 0 and charges nothing when every recipient is in error', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000 });
    const response = await batch(ws, { recipients: [{ phone: '0912345678' }, { template_data: VALID_DATA }] });
    expectStatus(response, 202);
    expect(response.body).toMatchObject({ accepted: 0, total: 2, scheduled_at: null });
    expect(response.body.results.map((result: { status: string }) => result.status)).toEqual(['error', 'error']);
    expect(await listAll(gateway, ws)).toEqual([]);
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(10_000);
    expect(wallet.ledger.map((entry) => entry.kind)).toEqual(['top_up']);
  });

  it('accepts 500 recipients', async () => {
    const ws = await seedWorkspace(gateway, { balance: 1_000_000, price: 100 });
    const response = await batch(ws, { recipients: recipients(500, '0912').map((recipient, index) => ({ ...recipient, phone: `0912${String(index).padStart(6, '0')}` })) });
    expectStatus(response, 202);
    expect(response.body).toMatchObject({ accepted: 500, total: 500 });
    expect(new Set(response.body.results.map((result: { msg_id: string }) => result.msg_id)).size).toBe(500);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000 - 50_000);
  });

  describe('malformed batches are 400 and queue nothing', () => {
    let ws: SeededWorkspace;
    beforeAll(async () => {
      ws = await seedWorkspace(gateway);
    });

    const cases: [string, Record<string, unknown>, ErrorType][] = [
      ['0 recipients', { recipients: [] }, 'invalid_request'],
      ['501 recipients', { recipients: recipients(501) }, 'invalid_request'],
      ['recipients missing', {}, 'invalid_request'],
      ['recipients not an array', { recipients: { phone: '0912345678' } }, 'invalid_request'],
      ['template_id missing', { template_id: undefined, recipients: recipients(1) }, 'invalid_request'],
      ['an invalid tracking_id on the last recipient', { recipients: [...recipients(3), { phone: '0912345678', template_data: VALID_DATA, tracking_id: 'bad id' }] }, 'invalid_tracking_id'],
      ['a tracking_id of 49 characters', { recipients: [{ phone: '0912345678', template_data: VALID_DATA, tracking_id: 'x'.repeat(49) }, ...recipients(2)] }, 'invalid_tracking_id'],
      ['an unknown recipient field', { recipients: [{ phone: '0912345678', template_data: VALID_DATA, name: 'A' }] }, 'invalid_request'],
      ['an unknown top-level field', { recipients: recipients(1), priority: 1 }, 'invalid_request'],
      ['a non-string template_data value', { recipients: [...recipients(1), { phone: '0912345678', template_data: { name: 'A', code: 1 } }] }, 'invalid_request'],
      ['a phone that is a number', { recipients: [{ phone: 912345678, template_data: VALID_DATA }] }, 'invalid_request'],
      ['an invalid mode', { recipients: recipients(1), mode: 'rsa' }, 'invalid_request'],
      ['send_at more than 60 days ahead', { recipients: recipients(1), send_at: new Date(Date.now() + 61 * DAY_MS).toISOString() }, 'invalid_send_at'],
      ['send_at that is not a date', { recipients: recipients(1), send_at: 'next week' }, 'invalid_send_at'],
    ];

    it.each(cases)('%s is %s', async (_label, body, type) => {
      const before = await walletOf(gateway, ws.workspaceId);
      expectError(await batch(ws, body), type);
      expect(await listAll(gateway, ws)).toEqual([]);
      expect((await walletOf(gateway, ws.workspaceId)).ledger).toEqual(before.ledger);
      expect((await quotaOf(ws)).used).toBe(0);
    });
  });

  it('is 404 for an unknown template', async () => {
    const ws = await seedWorkspace(gateway);
    expectError(await batch(ws, { template_id: 'nope', recipients: recipients(2) }), 'template_not_found');
    expect(await listAll(gateway, ws)).toEqual([]);
  });

  it('is 400 naming the status for a template that is not ENABLE', async () => {
    const ws = await seedWorkspace(gateway);
    const templateId = unique('tplpending');
    await putTemplate(gateway, ws.workspaceId, templateId, { oa_id: ws.oaId, status: 'PENDING_REVIEW' });
    expectError(await batch(ws, { template_id: templateId, recipients: [{ phone: '0912345678', template_data: { name: 'A' } }] }), 'template_not_enabled', /PENDING_REVIEW/);
    expect(await listAll(gateway, ws)).toEqual([]);
  });

  it('is 402 when the wallet cannot pay for the whole batch, and queues nothing', async () => {
    const ws = await seedWorkspace(gateway, { balance: 1_000, price: 300 });
    expectError(await batch(ws, { recipients: recipients(4) }), 'insufficient_balance');
    expect(await listAll(gateway, ws)).toEqual([]);
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(1_000);
    expect(wallet.ledger.map((entry) => entry.kind)).toEqual(['top_up']);
    expect((await quotaOf(ws)).used).toBe(0);
    // Recipients in error do not count: three valid ones fit.
    const fits = await batch(ws, { recipients: [...recipients(3), { phone: '0912345678' }] });
    expectStatus(fits, 202);
    expect(fits.body).toMatchObject({ accepted: 3, total: 4 });
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(100);
  });

  it('is 402 naming the cap when the batch does not fit under the account cap, and queues nothing', async () => {
    const ws = await seedWorkspace(gateway, { messageCap: 2 });
    expectError(await batch(ws, { recipients: recipients(3) }), 'account_cap_reached');
    expect(await listAll(gateway, ws)).toEqual([]);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000);
    expectStatus(await batch(ws, { recipients: recipients(2) }), 202);
  });

  describe('daily quota of the sender account', () => {
    it('queues up to the quota, then daily_quota_exceeded; later batches get only daily_quota_exceeded', async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 3, balance: 10_000, price: 300 });
      const before = Date.now();
      const first = await batch(ws, { recipients: recipients(5).map((recipient, index) => ({ ...recipient, tracking_id: `q-${index}` })) });
      expectStatus(first, 202);
      expect(first.body.accepted).toBe(3);
      expect(first.body.total).toBe(5);
      expect(first.body.results.map((result: { status: string }) => result.status)).toEqual(['queued', 'queued', 'queued', 'error', 'error']);
      for (const result of first.body.results.slice(3)) {
        expect(result.error).toMatch(/^daily_quota_exceeded: \S/);
        expect(result.msg_id).toBeUndefined();
      }
      expect(first.body.results[3]).toMatchObject({ phone: '84912000003', tracking_id: 'q-3' });
      expect(await listAll(gateway, ws)).toHaveLength(3);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000 - 900);

      const quota = await quotaOf(ws);
      expect(quota).toEqual({ oa_id: ws.oaId, oa_name: expect.any(String), daily_quota: 3, used: 3, remaining: 0, reset_at: expect.any(String), error: null });
      expect([nextVietnamMidnightText(before), nextVietnamMidnightText(Date.now())]).toContain(quota.reset_at);

      const later = await batch(ws, { recipients: recipients(2) });
      expectStatus(later, 202);
      expect(later.body.accepted).toBe(0);
      expect(later.body.total).toBe(2);
      for (const result of later.body.results) expect(result).toMatchObject({ status: 'error', error: expect.stringMatching(/^daily_quota_exceeded: /) });
      expect(await listAll(gateway, ws)).toHaveLength(3);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000 - 900);
    });

    it('does not count recipients in error against the quota', async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 2 });
      const response = await batch(ws, { recipients: [{ phone: '0912345678' }, ...recipients(2), ...recipients(1)] });
      expectStatus(response, 202);
      expect(response.body.results.map((result: { status: string; error?: string }) => result.error?.split(':')[0] ?? result.status)).toEqual([
        'invalid_template_data',
        'queued',
        'queued',
        'daily_quota_exceeded',
      ]);
      expect((await quotaOf(ws)).used).toBe(2);
    });

    it('does not pre-check a single send against an exhausted quota', async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 1 });
      expectStatus(await batch(ws, { recipients: recipients(1) }), 202);
      expect((await quotaOf(ws)).remaining).toBe(0);
      const single = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } });
      expectStatus(single, 202);
      expect(single.body.status).toBe('queued');
      expect(await quotaOf(ws)).toMatchObject({ used: 2, remaining: 0 });
    });

    it('counts single sends against the quota that later batches see, and cancel gives it back', async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 3 });
      const send = () => gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } });
      const first = await send();
      expectStatus(first, 202);
      expectStatus(await send(), 202);
      expect(await quotaOf(ws)).toMatchObject({ used: 2, remaining: 1 });
      const limited = await batch(ws, { recipients: recipients(2) });
      expect(limited.body.accepted).toBe(1);
      expect(limited.body.results[1].error).toMatch(/^daily_quota_exceeded: /);
      expectStatus(await gateway.request('POST', `/api/v1/messages/${first.body.msg_id}/cancel`, { key: ws.apiKey }), 200);
      expect(await quotaOf(ws)).toMatchObject({ used: 2, remaining: 1 });
    });

    it('never grants more than the quota to concurrent batches', async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 5, balance: 100_000, price: 100 });
      const responses = await Promise.all(Array.from({ length: 4 }, () => batch(ws, { recipients: recipients(3) })));
      for (const response of responses) expectStatus(response, 202);
      const accepted = responses.reduce((sum, response) => sum + (response.body.accepted as number), 0);
      expect(accepted).toBe(5);
      expect(await listAll(gateway, ws)).toHaveLength(5);
      expect((await quotaOf(ws)).used).toBe(5);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(100_000 - 500);
    });

    it("reserves the quota of the day the message will be sent, not today's", async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 2 });
      const sendAt = new Date(Math.floor((Date.now() + 3 * DAY_MS) / 1000) * 1000).toISOString();
      const scheduled = await batch(ws, { recipients: recipients(2), send_at: sendAt });
      expectStatus(scheduled, 202);
      expect(scheduled.body).toMatchObject({ accepted: 2, total: 2, scheduled_at: sendAt });
      for (const result of scheduled.body.results) {
        const record = await gateway.request('GET', `/api/v1/messages/${result.msg_id}`, { key: ws.apiKey });
        expect(record.body.scheduled_at).toBe(sendAt);
      }
      expect((await quotaOf(ws)).used).toBe(0);
      const same = await batch(ws, { recipients: recipients(1), send_at: sendAt });
      expect(same.body.results[0].error).toMatch(/^daily_quota_exceeded: /);
      const today = await batch(ws, { recipients: recipients(2) });
      expect(today.body.accepted).toBe(2);
      expect((await quotaOf(ws)).used).toBe(2);
    });

    it('keeps separate quotas per sender account', async () => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 1 });
      const secondOa = unique('oa2');
      await putSenderAccount(gateway, ws.workspaceId, secondOa, { daily_quota: 5 });
      const secondTemplate = unique('tpl2');
      await putTemplate(gateway, ws.workspaceId, secondTemplate, { oa_id: secondOa });
      expect((await batch(ws, { recipients: recipients(2) })).body.accepted).toBe(1);
      const other = await batch(ws, { template_id: secondTemplate, recipients: [{ phone: '0912345678', template_data: { name: 'A' } }, { phone: '0912345679', template_data: { name: 'B' } }] });
      expect(other.body.accepted).toBe(2);
      const all = await gateway.request('GET', '/api/v1/quota', { key: ws.apiKey });
      const byOa = Object.fromEntries(all.body.quotas.map((entry: { oa_id: string; used: number; remaining: number }) => [entry.oa_id, [entry.used, entry.remaining]]));
      expect(byOa).toEqual({ [ws.oaId]: [1, 0], [secondOa]: [2, 3] });
    });
  });

  describe('send_at and mode', () => {
    it('schedules the whole batch at send_at', async () => {
      const ws = await seedWorkspace(gateway);
      const sendAt = new Date(Math.floor((Date.now() + DAY_MS) / 1000) * 1000);
      const response = await batch(ws, { recipients: recipients(2), send_at: sendAt.toISOString() });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBe(sendAt.toISOString());
      expect(response.body.scheduled_at).toMatch(ISO_UTC_MS);
    });

    it('sends a past send_at now', async () => {
      const ws = await seedWorkspace(gateway);
      const response = await batch(ws, { recipients: recipients(1), send_at: '2001-01-01T00:00:00+07:00' });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBeNull();
    });

    it.each(['plain', 'hashphone'])('accepts mode %s for the whole batch', async (mode) => {
      const ws = await seedWorkspace(gateway);
      const response = await batch(ws, { recipients: recipients(2), mode });
      expectStatus(response, 202);
      const rows = await gateway.runtime.store.db.selectFrom('messages').select('mode').where('workspace_id', '=', ws.workspaceId).execute();
      expect(rows.map((row) => row.mode)).toEqual([mode, mode]);
    });
  });
});
