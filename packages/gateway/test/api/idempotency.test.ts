/** Idempotency-Key on every POST of /api/v1: docs/api.md (Errors and limits). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectError, expectStatus, listAll, queueOne, rsaCiphertext, walletOf } from './helpers.ts';

describe.each(STORE_KINDS)('Idempotency-Key (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  const post = (ws: SeededWorkspace, path: string, body: unknown, idempotencyKey?: string) =>
    gateway.request('POST', path, { key: ws.apiKey, body, headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey } });
  const sendBody = (ws: SeededWorkspace, extra: Record<string, unknown> = {}) => ({ template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, ...extra });
  const charges = async (ws: SeededWorkspace) => (await walletOf(gateway, ws.workspaceId)).ledger.filter((entry) => entry.kind === 'charge');

  describe('send', () => {
    it('replays the first response for the same key and body: one message, one charge', async () => {
      const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
      const first = await post(ws, '/api/v1/messages/send', sendBody(ws, { tracking_id: 'idem-1' }), 'order-42-attempt');
      expectStatus(first, 202);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const again = await post(ws, '/api/v1/messages/send', sendBody(ws, { tracking_id: 'idem-1' }), 'order-42-attempt');
        expectStatus(again, 202);
        expect(again.body).toEqual(first.body);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
      }
      expect((await listAll(gateway, ws)).map((message) => message.msg_id)).toEqual([first.body.msg_id]);
      expect(await charges(ws)).toHaveLength(1);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(9_700);
    });

    it('is 422 for the same key with a different body, and creates nothing', async () => {
      const ws = await seedWorkspace(gateway);
      expectStatus(await post(ws, '/api/v1/messages/send', sendBody(ws), 'key-A'), 202);
      expectError(await post(ws, '/api/v1/messages/send', sendBody(ws, { phone: '0987654321' }), 'key-A'), 'idempotency_key_reused');
      expectError(await post(ws, '/api/v1/messages/send', sendBody(ws, { tracking_id: 'other' }), 'key-A'), 'idempotency_key_reused');
      expect(await listAll(gateway, ws)).toHaveLength(1);
      expect(await charges(ws)).toHaveLength(1);
    });

    it('is 422 for the same key on another endpoint', async () => {
      const ws = await seedWorkspace(gateway);
      expectStatus(await post(ws, '/api/v1/messages/send', sendBody(ws), 'shared-key'), 202);
      expectError(await post(ws, '/api/v1/messages/batch', { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }] }, 'shared-key'), 'idempotency_key_reused');
      expect(await listAll(gateway, ws)).toHaveLength(1);
    });

    it('treats different keys as different requests', async () => {
      const ws = await seedWorkspace(gateway);
      const a = await post(ws, '/api/v1/messages/send', sendBody(ws), 'key-1');
      const b = await post(ws, '/api/v1/messages/send', sendBody(ws), 'key-2');
      expect(a.body.msg_id).not.toBe(b.body.msg_id);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(await listAll(gateway, ws)).toHaveLength(2);
    });

    it('accepts a key of 255 characters and refuses 256 with 400, creating nothing', async () => {
      const ws = await seedWorkspace(gateway);
      expectStatus(await post(ws, '/api/v1/messages/send', sendBody(ws), 'k'.repeat(255)), 202);
      expectError(await post(ws, '/api/v1/messages/send', sendBody(ws), 'k'.repeat(256)), 'invalid_idempotency_key');
      expectError(await post(ws, '/api/v1/messages/send', sendBody(ws), ''), 'invalid_idempotency_key');
      expect(await listAll(gateway, ws)).toHaveLength(1);
    });

    it('lets different workspaces use the same key independently', async () => {
      const a = await seedWorkspace(gateway);
      const b = await seedWorkspace(gateway);
      const first = await post(a, '/api/v1/messages/send', sendBody(a), 'same-key');
      const second = await post(b, '/api/v1/messages/send', sendBody(b), 'same-key');
      expectStatus(first, 202);
      expectStatus(second, 202);
      expect(second.headers.get('idempotent-replayed')).toBeNull();
      expect(second.body.msg_id).not.toBe(first.body.msg_id);
      expect(await listAll(gateway, a)).toHaveLength(1);
      expect(await listAll(gateway, b)).toHaveLength(1);
      // Each workspace's key still replays its own first response.
      const replayB = await post(b, '/api/v1/messages/send', sendBody(b), 'same-key');
      expect(replayB.body).toEqual(second.body);
      expect(replayB.headers.get('idempotent-replayed')).toBe('true');
    });

    it('does not keep a refused request: a retry after the wallet is topped up succeeds', async () => {
      const ws = await seedWorkspace(gateway, { balance: 100, price: 300 });
      expectError(await post(ws, '/api/v1/messages/send', sendBody(ws), 'retry-me'), 'insufficient_balance');
      await gateway.admin('POST', `/workspaces/${ws.workspaceId}/wallet/top-ups`, { amount: 1_000 });
      const retried = await post(ws, '/api/v1/messages/send', sendBody(ws), 'retry-me');
      expectStatus(retried, 202);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      expect(await listAll(gateway, ws)).toHaveLength(1);
    });

    it('collapses concurrent duplicates into one message', async () => {
      const ws = await seedWorkspace(gateway);
      const responses = await Promise.all(Array.from({ length: 5 }, () => post(ws, '/api/v1/messages/send', sendBody(ws), 'burst-key')));
      const accepted = responses.filter((response) => response.status === 202);
      // Duplicates still in flight may be told 409 (docs/api.md); none may create a second message.
      for (const response of responses) expect([202, 409]).toContain(response.status);
      expect(new Set(accepted.map((response) => response.body.msg_id)).size).toBe(1);
      expect(await listAll(gateway, ws)).toHaveLength(1);
      expect(await charges(ws)).toHaveLength(1);
    });
  });

  describe('batch and RSA', () => {
    it('replays a batch: same results, nothing queued or charged twice', async () => {
      const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300, dailyQuota: 10 });
      const body = { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }, { phone: '0912345679' }, { phone: '0912345670', template_data: VALID_DATA }] };
      const first = await post(ws, '/api/v1/messages/batch', body, 'batch-1');
      expectStatus(first, 202);
      expect(first.body.accepted).toBe(2);
      const again = await post(ws, '/api/v1/messages/batch', body, 'batch-1');
      expectStatus(again, 202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await listAll(gateway, ws)).toHaveLength(2);
      expect(await charges(ws)).toHaveLength(1);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000 - 600);
      const quota = await gateway.request('GET', '/api/v1/quota', { key: ws.apiKey });
      expect(quota.body.quotas[0].used).toBe(2);
      expectError(await post(ws, '/api/v1/messages/batch', { ...body, recipients: body.recipients.slice(0, 1) }, 'batch-1'), 'idempotency_key_reused');
    });

    it('replays an RSA request', async () => {
      const ws = await seedWorkspace(gateway);
      const body = { template_id: ws.templateId, recipients: [{ rsa_phone: rsaCiphertext(), template_data: VALID_DATA }] };
      const first = await post(ws, '/api/v1/messages/rsa', body, 'rsa-1');
      const again = await post(ws, '/api/v1/messages/rsa', body, 'rsa-1');
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await listAll(gateway, ws)).toHaveLength(1);
    });
  });

  describe('cancel', () => {
    it('replays a cancel: 200 again, refunded once', async () => {
      const ws = await seedWorkspace(gateway, { balance: 1_000, price: 300 });
      const msgId = await queueOne(gateway, ws);
      const first = await post(ws, `/api/v1/messages/${msgId}/cancel`, undefined, 'cancel-1');
      expectStatus(first, 200);
      expect(first.body).toEqual({ cancelled: true, msg_id: msgId });
      const again = await post(ws, `/api/v1/messages/${msgId}/cancel`, undefined, 'cancel-1');
      expectStatus(again, 200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const wallet = await walletOf(gateway, ws.workspaceId);
      expect(wallet.balance).toBe(1_000);
      expect(wallet.ledger.filter((entry) => entry.kind === 'refund')).toHaveLength(1);
      // Without the key, the message is gone.
      expectError(await post(ws, `/api/v1/messages/${msgId}/cancel`, undefined), 'message_not_found');
    });

    it('is 422 when the key is reused to cancel another message', async () => {
      const ws = await seedWorkspace(gateway);
      const a = await queueOne(gateway, ws);
      const b = await queueOne(gateway, ws);
      expectStatus(await post(ws, `/api/v1/messages/${a}/cancel`, undefined, 'cancel-2'), 200);
      expectError(await post(ws, `/api/v1/messages/${b}/cancel`, undefined, 'cancel-2'), 'idempotency_key_reused');
      const record = await gateway.request('GET', `/api/v1/messages/${b}`, { key: ws.apiKey });
      expect(record.body.status).toBe('queued');
    });

    it('is 400 for a key over 255 characters on cancel too', async () => {
      const ws = await seedWorkspace(gateway);
      const msgId = await queueOne(gateway, ws);
      expectError(await post(ws, `/api/v1/messages/${msgId}/cancel`, undefined, 'c'.repeat(256)), 'invalid_idempotency_key');
      expect((await gateway.request('GET', `/api/v1/messages/${msgId}`, { key: ws.apiKey })).body.status).toBe('queued');
    });
  });
});
