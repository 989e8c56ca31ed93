/**
 * Idempotency records written before an upgrade. They hold the HTTP response they answered with
 * (status_code, response_body) rather than the result of the request; for their 24 hours, a retry
 * with their key must still get exactly that answer and do nothing new. The records are written
 * into the store directly, as the previous version wrote them.
 * SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectStatus, listAll, walletOf } from './helpers.ts';

describe.each(STORE_KINDS)('Idempotency-Key records from before the upgrade (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  async function storeLegacyRecord(ws: SeededWorkspace, key: string, path: string, body: unknown, statusCode: number, response: unknown): Promise<void> {
    const now = Date.now();
    await gateway.runtime.store.db
      .insertInto('idempotency_records')
      .values({
        workspace_id: ws.workspaceId,
        idempotency_key: key,
        request_hash: sha256Hex(`POST ${path}\n${JSON.stringify(body)}`),
        result: null,
        status_code: statusCode,
        response_body: JSON.stringify(response),
        created_at: now,
        expires_at: now + 3_600_000,
      })
      .execute();
  }

  async function replay(ws: SeededWorkspace, key: string, path: string, body: unknown) {
    const response = await gateway.request('POST', path, { key: ws.apiKey, body, headers: { 'idempotency-key': key } });
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    return response;
  }

  it('answers a send, a batch and a cancel with the response they stored, and queues and charges nothing', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000 });
    const send = { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA };
    const sent = { msg_id: 'msg_01KAT0LEGACYSEND00000000000', tracking_id: 'order-7', status: 'queued', scheduled_at: '2026-11-25T02:00:00.000Z' };
    await storeLegacyRecord(ws, 'legacy-send', '/api/v1/messages/send', send, 202, sent);

    const batch = { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }, { template_data: VALID_DATA, tracking_id: 'no-phone' }] };
    const batched = {
      accepted: 1,
      total: 2,
      scheduled_at: null,
      results: [
        { phone: '84912345678', msg_id: 'msg_01KAT0LEGACYBATCH0000000000', tracking_id: 'msg_01KAT0LEGACYBATCH0000000000', status: 'queued' },
        { phone: '', tracking_id: 'no-phone', status: 'error', error: 'missing_phone: recipient has no phone number' },
      ],
    };
    await storeLegacyRecord(ws, 'legacy-batch', '/api/v1/messages/batch', batch, 202, batched);

    const cancelPath = '/api/v1/messages/msg_01KAT0LEGACYCANCEL000000000/cancel';
    await storeLegacyRecord(ws, 'legacy-cancel', cancelPath, null, 200, { cancelled: true, msg_id: 'msg_01KAT0LEGACYCANCEL000000000' });

    const sendAgain = await replay(ws, 'legacy-send', '/api/v1/messages/send', send);
    expectStatus(sendAgain, 202);
    expect(sendAgain.body).toEqual(sent);
    const batchAgain = await replay(ws, 'legacy-batch', '/api/v1/messages/batch', batch);
    expectStatus(batchAgain, 202);
    expect(batchAgain.body).toEqual(batched);
    const cancelAgain = await replay(ws, 'legacy-cancel', cancelPath, undefined);
    expectStatus(cancelAgain, 200);
    expect(cancelAgain.body).toEqual({ cancelled: true, msg_id: 'msg_01KAT0LEGACYCANCEL000000000' });

    expect(await listAll(gateway, ws)).toEqual([]);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000);
  });
});
