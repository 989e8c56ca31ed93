/** POST /api/v1/messages/send: docs/api.md (requests, money and caps). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorType } from '../../src/services/errors.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import {
  DAY_MS,
  ISO_UTC_MS,
  expectError,
  expectStatus,
  listAll,
  putSenderAccount,
  putTemplate,
  queueOne,
  sendOne,
  unique,
  vietnamWallClock,
  walletOf,
  workspaceOf,
} from './helpers.ts';

describe.each(STORE_KINDS)('POST /api/v1/messages/send (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  const send = (body: unknown, ws: SeededWorkspace = workspace) => gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body });
  const record = async (msgId: string, ws: SeededWorkspace = workspace) => {
    const response = await gateway.request('GET', `/api/v1/messages/${msgId}`, { key: ws.apiKey });
    expectStatus(response, 200);
    return response.body;
  };

  describe('happy path', () => {
    it('answers 202 with exactly msg_id, tracking_id, status and scheduled_at', async () => {
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, tracking_id: 'order-1001' });
      expectStatus(response, 202);
      expect(response.body).toEqual({ msg_id: expect.stringMatching(/^msg_\S+$/), tracking_id: 'order-1001', status: 'queued', scheduled_at: null });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('uses the msg_id as tracking_id when none is given', async () => {
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA });
      expectStatus(response, 202);
      expect(response.body.tracking_id).toBe(response.body.msg_id);
      expect((await record(response.body.msg_id)).tracking_id).toBe(response.body.msg_id);
    });

    it('gives every message its own msg_id', async () => {
      const ids = new Set<string>();
      for (let index = 0; index < 5; index += 1) ids.add(await queueOne(gateway, workspace));
      expect(ids.size).toBe(5);
    });

    it('stores the full record of docs/api.md', async () => {
      const before = Date.now();
      const response = await send({ template_id: workspace.templateId, phone: '+84 98 765 4321', template_data: VALID_DATA, tracking_id: 'rec.full_1' });
      const body = await record(response.body.msg_id);
      expect(body).toEqual({
        msg_id: response.body.msg_id,
        tracking_id: 'rec.full_1',
        status: 'queued',
        phone: '84987654321',
        carrier: 'Viettel',
        source: 'api',
        template_id: workspace.templateId,
        oa_id: workspace.oaId,
        provider_msg_id: null,
        error_code: null,
        error_message: null,
        error_reason: null,
        scheduled_at: null,
        sent_at: null,
        delivered_at: null,
        failed_at: null,
        created_at: expect.stringMatching(ISO_UTC_MS),
      });
      expect(Date.parse(body.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(body.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('accepts a template without template_data when it has no required params', async () => {
      const templateId = unique('tplnoparams');
      await putTemplate(gateway, workspace.workspaceId, templateId, { oa_id: workspace.oaId, params: [] });
      const response = await send({ template_id: templateId, phone: '0912345678' });
      expectStatus(response, 202);
      const optional = unique('tploptional');
      await putTemplate(gateway, workspace.workspaceId, optional, {
        oa_id: workspace.oaId,
        params: [{ name: 'note', type: 'STRING', required: false, max_length: 5, min_length: 2 }],
      });
      expectStatus(await send({ template_id: optional, phone: '0912345678', template_data: {} }), 202);
      expectStatus(await send({ template_id: optional, phone: '0912345678', template_data: { note: 'ok' } }), 202);
      expectError(await send({ template_id: optional, phone: '0912345678', template_data: { note: 'x' } }), 'invalid_template_data');
    });
  });

  describe('phone normalisation and carrier', () => {
    it.each([
      ['local form', '0912345678', '84912345678', 'Vinaphone'],
      ['+84 form', '+84912345678', '84912345678', 'Vinaphone'],
      ['84 form', '84912345678', '84912345678', 'Vinaphone'],
      ['bare national number', '912345678', '84912345678', 'Vinaphone'],
      ['spaces', '091 234 5678', '84912345678', 'Vinaphone'],
      ['dots', '091.234.5678', '84912345678', 'Vinaphone'],
      ['dashes', '091-234-5678', '84912345678', 'Vinaphone'],
      ['parentheses', '(091) 234-5678', '84912345678', 'Vinaphone'],
      ['+84 with separators', '+84 (91) 234.56-78', '84912345678', 'Vinaphone'],
      ['Viettel', '0961234567', '84961234567', 'Viettel'],
      ['Viettel 03x', '0351234567', '84351234567', 'Viettel'],
      ['Mobifone', '0901234567', '84901234567', 'Mobifone'],
      ['Mobifone 07x', '0771234567', '84771234567', 'Mobifone'],
      ['Vinaphone 08x', '0831234567', '84831234567', 'Vinaphone'],
      ['Vietnamobile', '0921234567', '84921234567', 'Vietnamobile'],
      ['Gmobile', '0991234567', '84991234567', 'Gmobile'],
      ['Itel', '0871234567', '84871234567', 'Itel'],
      ['Reddi', '0551234567', '84551234567', 'Reddi'],
      ['unknown prefix', '0123456789', '84123456789', null],
      ['malformed but queued', '0912', '84912', 'Vinaphone'],
    ])('%s: %s → %s (%s)', async (_label, phone, normalised, carrier) => {
      const response = await send({ template_id: workspace.templateId, phone, template_data: VALID_DATA });
      expectStatus(response, 202);
      const body = await record(response.body.msg_id);
      expect(body.phone).toBe(normalised);
      expect(body.carrier).toBe(carrier);
    });

    it('is 400 when the phone has no digits left, and for an empty phone', async () => {
      expectError(await send({ template_id: workspace.templateId, phone: ' - . ', template_data: VALID_DATA }), 'missing_phone');
      expectError(await send({ template_id: workspace.templateId, phone: '', template_data: VALID_DATA }), 'invalid_request');
    });
  });

  describe('money', () => {
    it('charges the template price to the wallet with a charge ledger entry', async () => {
      const ws = await seedWorkspace(gateway, { balance: 10_000, price: 450 });
      const msgId = await queueOne(gateway, ws);
      const wallet = await walletOf(gateway, ws.workspaceId);
      expect(wallet.balance).toBe(10_000 - 450);
      expect(wallet.ledger).toHaveLength(2);
      expect(wallet.ledger[0]).toEqual({
        id: expect.any(String),
        kind: 'charge',
        amount: -450,
        balance_after: 9_550,
        message_count: 1,
        reference: msgId,
        note: null,
        created_at: expect.stringMatching(ISO_UTC_MS),
      });
      expect(wallet.ledger[1]).toMatchObject({ kind: 'top_up', amount: 10_000, balance_after: 10_000 });
      await queueOne(gateway, ws);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000 - 900);
      expect((await workspaceOf(gateway, ws.workspaceId)).messages_used).toBe(2);
    });

    it('charges a free template nothing but still queues it', async () => {
      const ws = await seedWorkspace(gateway, { balance: 1_000, price: 0 });
      await queueOne(gateway, ws);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000);
    });

    it('is 402 when the wallet is too low, and stores and charges nothing', async () => {
      const ws = await seedWorkspace(gateway, { balance: 299, price: 300 });
      const response = await sendOne(gateway, ws);
      expectError(response, 'insufficient_balance');
      expect(await listAll(gateway, ws)).toEqual([]);
      const wallet = await walletOf(gateway, ws.workspaceId);
      expect(wallet.balance).toBe(299);
      expect(wallet.ledger.map((entry) => entry.kind)).toEqual(['top_up']);
    });

    it('sends with exactly enough balance, then is 402', async () => {
      const ws = await seedWorkspace(gateway, { balance: 300, price: 300 });
      await queueOne(gateway, ws);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(0);
      expectError(await sendOne(gateway, ws), 'insufficient_balance');
      expect(await listAll(gateway, ws)).toHaveLength(1);
    });

    it('is 402 naming the cap when the account message cap is reached', async () => {
      const ws = await seedWorkspace(gateway);
      const capped = await gateway.admin('PUT', `/workspaces/${ws.workspaceId}/message-cap`, { message_cap: 2 });
      expect(capped.status, capped.text).toBe(200);
      await queueOne(gateway, ws);
      await queueOne(gateway, ws);
      const balance = (await walletOf(gateway, ws.workspaceId)).balance;
      const response = await sendOne(gateway, ws);
      expectError(response, 'account_cap_reached');
      expect(await listAll(gateway, ws)).toHaveLength(2);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(balance);
      // Raising the cap lets sending continue; removing it lifts the limit.
      await gateway.admin('PUT', `/workspaces/${ws.workspaceId}/message-cap`, { message_cap: 3 });
      await queueOne(gateway, ws);
      expectError(await sendOne(gateway, ws), 'account_cap_reached');
      await gateway.admin('PUT', `/workspaces/${ws.workspaceId}/message-cap`, { message_cap: null });
      await queueOne(gateway, ws);
    });

    it('never overdraws the wallet under concurrent sends', async () => {
      const ws = await seedWorkspace(gateway, { balance: 1_500, price: 300 });
      const responses = await Promise.all(Array.from({ length: 10 }, () => sendOne(gateway, ws)));
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([202, 202, 202, 202, 202, 402, 402, 402, 402, 402]);
      for (const response of responses.filter((r) => r.status === 402)) expectError(response, 'insufficient_balance');
      expect(await listAll(gateway, ws)).toHaveLength(5);
      const wallet = await walletOf(gateway, ws.workspaceId);
      expect(wallet.balance).toBe(0);
      expect(wallet.ledger.filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.amount, 0)).toBe(-1_500);
    });

    it('never passes the account cap under concurrent sends', async () => {
      const ws = await seedWorkspace(gateway, { messageCap: 4 });
      const responses = await Promise.all(Array.from({ length: 10 }, () => sendOne(gateway, ws)));
      expect(responses.filter((response) => response.status === 202)).toHaveLength(4);
      for (const response of responses.filter((r) => r.status !== 202)) expectError(response, 'account_cap_reached');
      expect(await listAll(gateway, ws)).toHaveLength(4);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000 - 1_200);
    });

    it('is 402 at the cap set when the workspace was created, counted over its life', async () => {
      const ws = await seedWorkspace(gateway, { messageCap: 1 });
      await queueOne(gateway, ws);
      expectError(await sendOne(gateway, ws), 'account_cap_reached');
    });
  });

  describe('send_at', () => {
    it('schedules a future send_at and reports scheduled_at in UTC with milliseconds', async () => {
      const at = new Date(Math.floor((Date.now() + 2 * DAY_MS) / 1000) * 1000);
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: at.toISOString() });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBe(at.toISOString());
      expect(response.body.scheduled_at).toMatch(ISO_UTC_MS);
      const body = await record(response.body.msg_id);
      expect(body).toMatchObject({ status: 'queued', scheduled_at: at.toISOString() });
    });

    it('reads an explicit +07:00 offset', async () => {
      const at = Math.floor((Date.now() + DAY_MS) / 1000) * 1000;
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: `${vietnamWallClock(at)}+07:00` });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBe(new Date(at).toISOString());
    });

    it('reads a send_at without an offset as Vietnam time (UTC+7)', async () => {
      const at = Math.floor((Date.now() + 3 * DAY_MS) / 1000) * 1000;
      const local = vietnamWallClock(at);
      expect(local).not.toMatch(/Z|[+-]\d\d:?\d\d$/);
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: local });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBe(new Date(at).toISOString());
    });

    it('sends a past send_at now: scheduled_at is null', async () => {
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: '2020-01-01T00:00:00Z' });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBeNull();
      expect((await record(response.body.msg_id)).scheduled_at).toBeNull();
    });

    it('accepts 59 days ahead and refuses more than 60 days ahead with 400, charging nothing', async () => {
      expectStatus(await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: new Date(Date.now() + 59 * DAY_MS).toISOString() }), 202);
      const ws = await seedWorkspace(gateway);
      const response = await send({ template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: new Date(Date.now() + 61 * DAY_MS).toISOString() }, ws);
      expectError(response, 'invalid_send_at');
      expect(await listAll(gateway, ws)).toEqual([]);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000);
    });

    it.each(['tomorrow', '2026-13-01T00:00:00Z', '2026-02-30T10:00:00Z', '2026-01-01T25:00:00Z', '', '1735689600000'])('is 400 for send_at %j', async (sendAt) => {
      expectError(await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: sendAt }), 'invalid_send_at');
    });

    it('is 400 for a send_at that is not a string', async () => {
      expectError(await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: 1735689600000 }), 'invalid_request');
    });
  });

  describe('mode', () => {
    it.each(['plain', 'hashphone'])('accepts mode %s and keeps the phone on the record', async (mode) => {
      const response = await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, mode });
      expectStatus(response, 202);
      expect((await record(response.body.msg_id)).phone).toBe('84912345678');
      const row = await gateway.runtime.store.db.selectFrom('messages').select('mode').where('id', '=', response.body.msg_id).executeTakeFirstOrThrow();
      expect(row.mode).toBe(mode);
    });

    it("uses the sender account's default mode when omitted", async () => {
      const ws = await seedWorkspace(gateway);
      await putSenderAccount(gateway, ws.workspaceId, ws.oaId, { default_mode: 'hashphone' });
      const msgId = await queueOne(gateway, ws);
      const row = await gateway.runtime.store.db.selectFrom('messages').select('mode').where('id', '=', msgId).executeTakeFirstOrThrow();
      expect(row.mode).toBe('hashphone');
    });

    it.each(['rsa', 'PLAIN', '', 'zalo'])('is 400 for mode %j', async (mode) => {
      expectError(await send({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, mode }), 'invalid_request');
    });
  });

  describe('request errors (400, nothing charged or stored)', () => {
    let ws: SeededWorkspace;
    beforeAll(async () => {
      ws = await seedWorkspace(gateway, { balance: 50_000 });
    });

    const cases: [string, Record<string, unknown>, ErrorType][] = [
      // undefined is left out of the JSON body
      ['missing template_id', { template_id: undefined, phone: '0912345678', template_data: VALID_DATA }, 'invalid_request'],
      ['empty template_id', { template_id: '', phone: '0912345678', template_data: VALID_DATA }, 'invalid_request'],
      ['missing phone', { template_data: VALID_DATA }, 'invalid_request'],
      ['phone not a string', { phone: 912345678, template_data: VALID_DATA }, 'invalid_request'],
      ['unknown field', { phone: '0912345678', template_data: VALID_DATA, priority: 'high' }, 'invalid_request'],
      ['tracking_id of 49 characters', { phone: '0912345678', template_data: VALID_DATA, tracking_id: 'a'.repeat(49) }, 'invalid_tracking_id'],
      ['tracking_id with a space', { phone: '0912345678', template_data: VALID_DATA, tracking_id: 'order 1' }, 'invalid_tracking_id'],
      ['tracking_id with a slash', { phone: '0912345678', template_data: VALID_DATA, tracking_id: 'order/1' }, 'invalid_tracking_id'],
      ['tracking_id with a non-ASCII letter', { phone: '0912345678', template_data: VALID_DATA, tracking_id: 'đơn-1' }, 'invalid_tracking_id'],
      ['empty tracking_id', { phone: '0912345678', template_data: VALID_DATA, tracking_id: '' }, 'invalid_tracking_id'],
      ['tracking_id not a string', { phone: '0912345678', template_data: VALID_DATA, tracking_id: 12 }, 'invalid_tracking_id'],
      ['template_data missing a required param', { phone: '0912345678', template_data: { name: 'A' } }, 'invalid_template_data'],
      ['template_data omitted although params are required', { phone: '0912345678' }, 'invalid_template_data'],
      ['template_data value too long', { phone: '0912345678', template_data: { name: 'x'.repeat(31), code: 'A1' } }, 'invalid_template_data'],
      ['template_data value too short', { phone: '0912345678', template_data: { name: '', code: 'A1' } }, 'invalid_template_data'],
      ['template_data with an unknown key', { phone: '0912345678', template_data: { ...VALID_DATA, extra: 'x' } }, 'invalid_template_data'],
      ['template_data with a number value', { phone: '0912345678', template_data: { name: 'A', code: 123 } }, 'invalid_request'],
      ['template_data with a null value', { phone: '0912345678', template_data: { name: 'A', code: null } }, 'invalid_request'],
      ['template_data that is an array', { phone: '0912345678', template_data: ['A', 'B'] }, 'invalid_request'],
      ['template_data that is a string', { phone: '0912345678', template_data: 'name=A' }, 'invalid_request'],
    ];

    it.each(cases)('%s is %s', async (_label, fields, type) => {
      const body = { template_id: ws.templateId, ...fields };
      const before = await walletOf(gateway, ws.workspaceId);
      expectError(await send(body, ws), type);
      expect(await listAll(gateway, ws)).toEqual([]);
      const after = await walletOf(gateway, ws.workspaceId);
      expect(after.balance).toBe(before.balance);
      expect(after.ledger).toEqual(before.ledger);
    });

    it('counts template_data lengths in characters, not bytes', async () => {
      // 30 Vietnamese characters, many of them several bytes long in UTF-8, fit max_length 30.
      const name = 'Nguyễn Thị Hồng Nhung Đặng Ưở'.padEnd(30, 'ệ');
      expect([...name]).toHaveLength(30);
      expectStatus(await send({ template_id: ws.templateId, phone: '0912345678', template_data: { name, code: 'A1' } }, ws), 202);
      expectError(await send({ template_id: ws.templateId, phone: '0912345678', template_data: { name: `${name}ệ`, code: 'A1' } }, ws), 'invalid_template_data');
    });

    it('treats params named like Object.prototype members as plain names', async () => {
      const templateId = unique('tplproto');
      await putTemplate(gateway, ws.workspaceId, templateId, {
        oa_id: ws.oaId,
        params: [
          { name: 'constructor', type: 'STRING', required: false, max_length: 10, min_length: 1 },
          { name: 'toString', type: 'STRING', required: true, max_length: 10, min_length: 1 },
        ],
      });
      expectStatus(await send({ template_id: templateId, phone: '0912345678', template_data: { toString: 'x' } }, ws), 202);
      expectStatus(await send({ template_id: templateId, phone: '0912345678', template_data: { toString: 'x', constructor: 'y' } }, ws), 202);
      expectError(await send({ template_id: templateId, phone: '0912345678', template_data: { constructor: 'y' } }, ws), 'invalid_template_data');
    });

    it('accepts a tracking_id of exactly 48 allowed characters', async () => {
      const trackingId = `Aa0._-${'z'.repeat(42)}`;
      expect(trackingId).toHaveLength(48);
      const response = await send({ template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, tracking_id: trackingId }, ws);
      expectStatus(response, 202);
      expect(response.body.tracking_id).toBe(trackingId);
    });
  });

  describe('template errors', () => {
    it('is 404 for an unknown template and charges nothing', async () => {
      const ws = await seedWorkspace(gateway);
      expectError(await send({ template_id: 'no-such-template', phone: '0912345678', template_data: VALID_DATA }, ws), 'template_not_found');
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000);
      expect(await listAll(gateway, ws)).toEqual([]);
    });

    it.each(['DISABLE', 'PENDING_REVIEW', 'REJECT', 'DELETE'])('is 400 naming the status for a %s template, and charges nothing', async (status) => {
      const ws = await seedWorkspace(gateway);
      const templateId = unique('tplstate');
      await putTemplate(gateway, ws.workspaceId, templateId, { oa_id: ws.oaId, status });
      const response = await send({ template_id: templateId, phone: '0912345678', template_data: { name: 'A' } }, ws);
      expectError(response, 'template_not_enabled', new RegExp(status));
      expect(await listAll(gateway, ws)).toEqual([]);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000);
      // Enabling it makes it sendable at once.
      await putTemplate(gateway, ws.workspaceId, templateId, { oa_id: ws.oaId, status: 'ENABLE' });
      expectStatus(await send({ template_id: templateId, phone: '0912345678', template_data: { name: 'A' } }, ws), 202);
    });

    it('charges the price the template has now', async () => {
      const ws = await seedWorkspace(gateway, { balance: 10_000 });
      await putTemplate(gateway, ws.workspaceId, ws.templateId, {
        oa_id: ws.oaId,
        price: 1_234,
        params: [
          { name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
          { name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 },
        ],
      });
      await queueOne(gateway, ws);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000 - 1_234);
    });
  });
});
