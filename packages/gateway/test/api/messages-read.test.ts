/** GET /api/v1/messages/{id} and GET /api/v1/messages: docs/api.md (Listing). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectError, expectStatus, putTemplate, queueOne, rsaCiphertext, setMessageCreatedAt, setMessageStatus, unique } from './helpers.ts';

describe.each(STORE_KINDS)('reading messages (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  const list = (ws: SeededWorkspace, query = '') => gateway.request('GET', `/api/v1/messages${query}`, { key: ws.apiKey });
  const ids = (response: { body: { messages: { msg_id: string }[] } }) => response.body.messages.map((message) => message.msg_id);

  describe('GET /api/v1/messages/:id', () => {
    it('returns the record, and 404 for an unknown id', async () => {
      const ws = await seedWorkspace(gateway);
      const msgId = await queueOne(gateway, ws, { tracking_id: 'get-1' });
      const found = await gateway.request('GET', `/api/v1/messages/${msgId}`, { key: ws.apiKey });
      expectStatus(found, 200);
      expect(found.body).toMatchObject({ msg_id: msgId, tracking_id: 'get-1', status: 'queued' });
      expect(Object.keys(found.body).sort()).toEqual(
        ['msg_id', 'tracking_id', 'status', 'phone', 'carrier', 'source', 'template_id', 'oa_id', 'provider_msg_id', 'error_code', 'error_message', 'error_reason', 'scheduled_at', 'sent_at', 'delivered_at', 'failed_at', 'created_at'].sort(),
      );
      expectError(await gateway.request('GET', '/api/v1/messages/msg_01JUNKJUNKJUNKJUNKJUNKJUNK', { key: ws.apiKey }), 'message_not_found');
      expectError(await gateway.request('GET', `/api/v1/messages/${msgId}x`, { key: ws.apiKey }), 'message_not_found');
    });

    it('shows the status the message is in', async () => {
      const ws = await seedWorkspace(gateway);
      const msgId = await queueOne(gateway, ws);
      await setMessageStatus(gateway, msgId, 'failed');
      const found = await gateway.request('GET', `/api/v1/messages/${msgId}`, { key: ws.apiKey });
      expect(found.body.status).toBe('failed');
    });
  });

  describe('GET /api/v1/messages', () => {
    let ws: SeededWorkspace;
    let secondTemplate: string;
    let secondOa: string;
    const sent: string[] = [];

    beforeAll(async () => {
      ws = await seedWorkspace(gateway);
      const other = await seedWorkspace(gateway);
      secondOa = ws.oaId;
      secondTemplate = unique('tplsecond');
      await putTemplate(gateway, ws.workspaceId, secondTemplate, { oa_id: ws.oaId });
      // Seven messages, sent one after another: 0..4 on the seeded template, 5..6 on the second.
      // 0987654378 ends in the same two digits as 0912345678: the phone index files them together.
      const phones = ['0912345678', '0912345678', '0987654378', '0901234567', '0912345678'];
      for (const [index, phone] of phones.entries()) sent.push(await queueOne(gateway, ws, { phone, tracking_id: `list-${index}` }));
      for (const index of [5, 6]) sent.push(await queueOne(gateway, ws, { template_id: secondTemplate, phone: '0911111111', template_data: { name: 'A' }, tracking_id: `list-${index}` }));
      // Noise in another workspace that must never show.
      await queueOne(gateway, other, { phone: '0912345678', tracking_id: 'list-0' });
    });

    it('lists newest first with the default limit 50 and offset 0', async () => {
      const response = await list(ws);
      expectStatus(response, 200);
      expect(response.body).toEqual({ messages: expect.any(Array), limit: 50, offset: 0, count: 7, has_more: false });
      expect(ids(response)).toEqual([...sent].reverse());
      expect(response.body.messages[0]).toMatchObject({ tracking_id: 'list-6', template_id: secondTemplate });
    });

    it('applies the default limit of 50', async () => {
      const many = await seedWorkspace(gateway, { price: 1 });
      const batch = await gateway.request('POST', '/api/v1/messages/batch', {
        key: many.apiKey,
        body: { template_id: many.templateId, recipients: Array.from({ length: 60 }, (_unused, index) => ({ phone: `09120000${String(index).padStart(2, '0')}`, template_data: VALID_DATA })) },
      });
      expect(batch.body.accepted).toBe(60);
      const page = await list(many);
      expect(page.body).toMatchObject({ limit: 50, offset: 0, count: 50, has_more: true });
      const rest = await list(many, '?offset=50');
      expect(rest.body).toMatchObject({ limit: 50, offset: 50, count: 10, has_more: false });
      expect(new Set([...ids(page), ...ids(rest)]).size).toBe(60);
    });

    it('pages with limit and offset, telling whether more exist', async () => {
      const first = await list(ws, '?limit=3');
      expect(first.body).toMatchObject({ limit: 3, offset: 0, count: 3, has_more: true });
      expect(ids(first)).toEqual([sent[6], sent[5], sent[4]]);
      const second = await list(ws, '?limit=3&offset=3');
      expect(second.body).toMatchObject({ limit: 3, offset: 3, count: 3, has_more: true });
      expect(ids(second)).toEqual([sent[3], sent[2], sent[1]]);
      const third = await list(ws, '?limit=3&offset=6');
      expect(third.body).toMatchObject({ limit: 3, offset: 6, count: 1, has_more: false });
      expect(ids(third)).toEqual([sent[0]]);
      const exact = await list(ws, '?limit=7');
      expect(exact.body).toMatchObject({ count: 7, has_more: false });
      const beyond = await list(ws, '?offset=100');
      expect(beyond.body).toEqual({ messages: [], limit: 50, offset: 100, count: 0, has_more: false });
      expect((await list(ws, '?limit=1')).body).toMatchObject({ count: 1, has_more: true });
      expect((await list(ws, '?limit=200')).body).toMatchObject({ limit: 200, count: 7 });
    });

    it.each([
      ...['limit=0', 'limit=201', 'limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x', 'status=delivering', 'status=QUEUED', 'sort=asc'].map((query) => [query, 'invalid_request'] as const),
      ['from=yesterday', 'invalid_date_range'] as const,
      ['to=2026-02-30T00:00:00Z', 'invalid_date_range'] as const,
    ])('?%s is %s', async (query, type) => {
      expectError(await list(ws, `?${query}`), type);
    });

    it('filters by tracking_id (exact match)', async () => {
      const response = await list(ws, '?tracking_id=list-2');
      expect(ids(response)).toEqual([sent[2]]);
      expect(response.body.count).toBe(1);
      expect((await list(ws, '?tracking_id=list')).body.count).toBe(0);
    });

    it.each(['0912345678', '84912345678', '+84912345678', '+84 912 345 678', '091.234.5678', '(091) 234-5678', '912345678'])(
      'filters by phone given as %s, normalised',
      async (phone) => {
        const response = await list(ws, `?phone=${encodeURIComponent(phone)}`);
        expect(ids(response)).toEqual([sent[4], sent[1], sent[0]]);
        for (const message of response.body.messages) expect(message.phone).toBe('84912345678');
      },
    );

    it('filters by status', async () => {
      const own = await seedWorkspace(gateway);
      const [a, b, c] = [await queueOne(gateway, own), await queueOne(gateway, own), await queueOne(gateway, own)];
      await setMessageStatus(gateway, a!, 'failed');
      await setMessageStatus(gateway, c!, 'delivered');
      expect(ids(await list(own, '?status=queued'))).toEqual([b]);
      expect(ids(await list(own, '?status=failed'))).toEqual([a]);
      expect(ids(await list(own, '?status=delivered'))).toEqual([c]);
      expect((await list(own, '?status=sending')).body.count).toBe(0);
    });

    it('filters by template_id and oa_id', async () => {
      expect(ids(await list(ws, `?template_id=${secondTemplate}`))).toEqual([sent[6], sent[5]]);
      expect(ids(await list(ws, `?template_id=${ws.templateId}`))).toEqual([sent[4], sent[3], sent[2], sent[1], sent[0]]);
      expect((await list(ws, `?oa_id=${secondOa}`)).body.count).toBe(7);
      expect((await list(ws, '?oa_id=unknown-oa')).body.count).toBe(0);
      expect((await list(ws, '?template_id=unknown')).body.count).toBe(0);
    });

    it('combines filters', async () => {
      expect(ids(await list(ws, `?phone=0912345678&template_id=${ws.templateId}&status=queued&limit=2`))).toEqual([sent[4], sent[1]]);
      expect(ids(await list(ws, `?phone=0912345678&template_id=${secondTemplate}`))).toEqual([]);
    });

    it('filters by from and to on created_at (inclusive; without an offset, Vietnam time)', async () => {
      const own = await seedWorkspace(gateway);
      const times = ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z'];
      const made: string[] = [];
      for (const time of times) {
        const msgId = await queueOne(gateway, own);
        // Test setup: back-date the record so the bounds are exact.
        await setMessageCreatedAt(gateway, msgId, Date.parse(time));
        made.push(msgId);
      }
      const record = await gateway.request('GET', `/api/v1/messages/${made[1]}`, { key: own.apiKey });
      expect(record.body.created_at).toBe(times[1]);
      expect(ids(await list(own))).toEqual([made[2], made[1], made[0]]);
      expect(ids(await list(own, '?from=2026-01-02T00:00:00Z'))).toEqual([made[2], made[1]]);
      expect(ids(await list(own, '?from=2026-01-02T00:00:00.001Z'))).toEqual([made[2]]);
      expect(ids(await list(own, '?to=2026-01-02T00:00:00.000Z'))).toEqual([made[1], made[0]]);
      expect(ids(await list(own, '?from=2026-01-01T12:00:00Z&to=2026-01-02T12:00:00Z'))).toEqual([made[1]]);
      expect(ids(await list(own, `?from=${encodeURIComponent('2026-01-02T07:00:00+07:00')}`))).toEqual([made[2], made[1]]);
      // 2026-01-02T07:00 in Vietnam is 2026-01-02T00:00Z.
      expect(ids(await list(own, '?from=2026-01-02T07:00:00'))).toEqual([made[2], made[1]]);
      expect(ids(await list(own, '?to=2026-01-02T06:59:59'))).toEqual([made[0]]);
      expect(ids(await list(own, '?from=2030-01-01T00:00:00Z'))).toEqual([]);
    });

    it('finds RSA messages by tracking_id but never by phone', async () => {
      const own = await seedWorkspace(gateway);
      const plain = await queueOne(gateway, own, { phone: '0912345678' });
      const response = await gateway.request('POST', '/api/v1/messages/rsa', {
        key: own.apiKey,
        body: { template_id: own.templateId, recipients: [{ rsa_phone: rsaCiphertext(), template_data: VALID_DATA, tracking_id: 'rsa-find' }] },
      });
      const rsaId = response.body.results[0].msg_id;
      expect(ids(await list(own))).toEqual([rsaId, plain]);
      expect(ids(await list(own, '?tracking_id=rsa-find'))).toEqual([rsaId]);
      expect(ids(await list(own, '?phone=0912345678'))).toEqual([plain]);
      expect(ids(await list(own, '?phone=null'))).toEqual([]);
      expect(ids(await list(own, '?phone='))).toEqual([]);
    });
  });
});
