/** GET /api/v1/templates, /oas and /quota: docs/api.md. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectError, expectStatus, nextVietnamMidnightText, putSenderAccount, putTemplate, unique } from './helpers.ts';

describe.each(STORE_KINDS)('catalog: templates, sender accounts, quota (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let secondOa: string;
  let disabled: string;
  let pending: string;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { price: 300, dailyQuota: 1_000 });
    secondOa = unique('oazz');
    await putSenderAccount(gateway, ws.workspaceId, secondOa, { name: 'Second OA', daily_quota: 50 });
    disabled = unique('tpldisabled');
    await putTemplate(gateway, ws.workspaceId, disabled, {
      oa_id: secondOa,
      status: 'DISABLE',
      name: 'Shipping update',
      template_type: 2,
      price: 550,
      preview_url: 'https://example.com/shipping',
      params: [
        { name: 'order', type: 'STRING', required: true, max_length: 20, min_length: 3 },
        { name: 'note', type: 'STRING', required: false, max_length: 100, min_length: 0 },
      ],
    });
    pending = unique('tplpending');
    await putTemplate(gateway, ws.workspaceId, pending, { oa_id: ws.oaId, status: 'PENDING_REVIEW' });
  });
  afterAll(async () => gateway?.close());

  const get = (path: string, key = ws.apiKey) => gateway.request('GET', path, { key });
  const templateIds = (body: { templates: { template_id: string }[] }) => body.templates.map((template) => template.template_id).sort();

  describe('GET /api/v1/templates', () => {
    it('lists every template of the workspace with exactly the fields of docs/api.md plus price', async () => {
      const response = await get('/api/v1/templates');
      expectStatus(response, 200);
      expect(response.body.count).toBe(3);
      expect(templateIds(response.body)).toEqual([ws.templateId, disabled, pending].sort());
      const seeded = response.body.templates.find((template: { template_id: string }) => template.template_id === ws.templateId);
      expect(seeded).toEqual({
        template_id: ws.templateId,
        name: 'Order confirmation',
        status: 'ENABLE',
        template_type: 1,
        oa_id: ws.oaId,
        oa_name: expect.stringMatching(/^OA /),
        preview_url: 'https://example.com/preview',
        price: 300,
        params: [
          { name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
          { name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 },
        ],
      });
      const shipping = response.body.templates.find((template: { template_id: string }) => template.template_id === disabled);
      expect(shipping).toEqual({
        template_id: disabled,
        name: 'Shipping update',
        status: 'DISABLE',
        template_type: 2,
        oa_id: secondOa,
        oa_name: 'Second OA',
        preview_url: 'https://example.com/shipping',
        price: 550,
        params: [
          { name: 'order', type: 'STRING', required: true, max_length: 20, min_length: 3 },
          { name: 'note', type: 'STRING', required: false, max_length: 100, min_length: 0 },
        ],
      });
    });

    it.each([
      ['ENABLE', () => [ws.templateId]],
      ['DISABLE', () => [disabled]],
      ['PENDING_REVIEW', () => [pending]],
      ['REJECT', () => []],
      ['DELETE', () => []],
    ] as const)('filters by status=%s', async (status, expected) => {
      const response = await get(`/api/v1/templates?status=${status}`);
      expectStatus(response, 200);
      expect(templateIds(response.body)).toEqual([...expected()].sort());
      expect(response.body.count).toBe(expected().length);
    });

    it('filters by oa_id, alone and with status', async () => {
      expect(templateIds((await get(`/api/v1/templates?oa_id=${secondOa}`)).body)).toEqual([disabled]);
      expect(templateIds((await get(`/api/v1/templates?oa_id=${ws.oaId}`)).body)).toEqual([ws.templateId, pending].sort());
      expect(templateIds((await get(`/api/v1/templates?oa_id=${ws.oaId}&status=ENABLE`)).body)).toEqual([ws.templateId]);
      expect((await get(`/api/v1/templates?oa_id=${secondOa}&status=ENABLE`)).body).toEqual({ templates: [], count: 0 });
      expect((await get('/api/v1/templates?oa_id=no-such-oa')).body).toEqual({ templates: [], count: 0 });
    });

    it.each(['enable', 'ACTIVE', ''])('is 400 for status=%j', async (status) => {
      expectError(await get(`/api/v1/templates?status=${status}`), 'invalid_request');
    });

    it('shows a status change made by the operator at once', async () => {
      const templateId = unique('tplflip');
      await putTemplate(gateway, ws.workspaceId, templateId, { oa_id: ws.oaId, status: 'ENABLE' });
      expect(templateIds((await get('/api/v1/templates?status=ENABLE')).body)).toContain(templateId);
      await putTemplate(gateway, ws.workspaceId, templateId, { oa_id: ws.oaId, status: 'REJECT' });
      expect(templateIds((await get('/api/v1/templates?status=ENABLE')).body)).not.toContain(templateId);
      expect(templateIds((await get('/api/v1/templates?status=REJECT')).body)).toEqual([templateId]);
      await putTemplate(gateway, ws.workspaceId, templateId, { oa_id: ws.oaId, status: 'DELETE' });
    });

    it('is an empty list for a workspace without templates', async () => {
      const empty = await gateway.admin('POST', '/workspaces', { name: 'empty' });
      const key = await gateway.admin('POST', `/workspaces/${empty.body.id}/api-keys`, { scopes: ['templates:read', 'messages:read'] });
      expect((await get('/api/v1/templates', key.body.key)).body).toEqual({ templates: [], count: 0 });
      expect((await get('/api/v1/oas', key.body.key)).body).toEqual({ oas: [], count: 0 });
      expect((await get('/api/v1/quota', key.body.key)).body).toEqual({ quotas: [], count: 0 });
    });
  });

  describe('GET /api/v1/oas', () => {
    it('lists the sender accounts with exactly oa_id and name', async () => {
      const response = await get('/api/v1/oas');
      expectStatus(response, 200);
      expect(response.body.count).toBe(2);
      expect([...response.body.oas].sort((a: { oa_id: string }, b: { oa_id: string }) => a.oa_id.localeCompare(b.oa_id))).toEqual(
        [
          { oa_id: ws.oaId, name: expect.stringMatching(/^OA /) },
          { oa_id: secondOa, name: 'Second OA' },
        ].sort((a, b) => a.oa_id.localeCompare(b.oa_id)),
      );
    });
  });

  describe('GET /api/v1/quota', () => {
    it('returns one entry per sender account with exactly the fields of docs/api.md', async () => {
      const before = Date.now();
      const response = await get('/api/v1/quota');
      expectStatus(response, 200);
      expect(response.body.count).toBe(2);
      const resetAt = response.body.quotas[0].reset_at;
      expect([nextVietnamMidnightText(before), nextVietnamMidnightText(Date.now())]).toContain(resetAt);
      expect(resetAt).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000\+07:00$/);
      const byOa = Object.fromEntries(response.body.quotas.map((entry: { oa_id: string }) => [entry.oa_id, entry]));
      expect(byOa[ws.oaId]).toEqual({ oa_id: ws.oaId, oa_name: expect.stringMatching(/^OA /), daily_quota: 1_000, remaining: expect.any(Number), used: expect.any(Number), reset_at: resetAt, error: null });
      expect(byOa[secondOa]).toEqual({ oa_id: secondOa, oa_name: 'Second OA', daily_quota: 50, remaining: 50, used: 0, reset_at: resetAt, error: null });
    });

    it('filters by oa_id, and is 404 for an unknown one', async () => {
      const response = await get(`/api/v1/quota?oa_id=${secondOa}`);
      expectStatus(response, 200);
      expect(response.body.count).toBe(1);
      expect(response.body.quotas[0].oa_id).toBe(secondOa);
      expectError(await get('/api/v1/quota?oa_id=no-such-oa'), 'sender_account_not_found');
    });

    it('counts batch messages in used and remaining', async () => {
      const own = await seedWorkspace(gateway, { dailyQuota: 10 });
      const before = (await get('/api/v1/quota', own.apiKey)).body.quotas[0];
      expect(before).toMatchObject({ daily_quota: 10, used: 0, remaining: 10 });
      const batch = await gateway.request('POST', '/api/v1/messages/batch', {
        key: own.apiKey,
        body: { template_id: own.templateId, recipients: Array.from({ length: 4 }, () => ({ phone: '0912345678', template_data: VALID_DATA })) },
      });
      expect(batch.body.accepted).toBe(4);
      expect((await get('/api/v1/quota', own.apiKey)).body.quotas[0]).toMatchObject({ daily_quota: 10, used: 4, remaining: 6 });
    });

    it('follows a daily quota change by the operator, never showing a negative remaining', async () => {
      const own = await seedWorkspace(gateway, { dailyQuota: 5 });
      await gateway.request('POST', '/api/v1/messages/batch', {
        key: own.apiKey,
        body: { template_id: own.templateId, recipients: Array.from({ length: 4 }, () => ({ phone: '0912345678', template_data: VALID_DATA })) },
      });
      await putSenderAccount(gateway, own.workspaceId, own.oaId, { name: `OA ${own.oaId}`, daily_quota: 2 });
      expect((await get('/api/v1/quota', own.apiKey)).body.quotas[0]).toMatchObject({ daily_quota: 2, used: 4, remaining: 0 });
    });

    it('is 400 for an unknown query parameter', async () => {
      expectError(await get('/api/v1/quota?oa=x'), 'invalid_request');
    });
  });
});
