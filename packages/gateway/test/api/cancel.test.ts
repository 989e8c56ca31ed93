/** POST /api/v1/messages/{id}/cancel: docs/api.md (States, Money and caps). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { DAY_MS, expectError, expectStatus, listAll, queueOne, rsaCiphertext, setMessageStatus, walletOf, workspaceOf } from './helpers.ts';

describe.each(STORE_KINDS)('POST /api/v1/messages/:id/cancel (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  const cancel = (ws: SeededWorkspace, msgId: string) => gateway.request('POST', `/api/v1/messages/${msgId}/cancel`, { key: ws.apiKey });
  const get = (ws: SeededWorkspace, msgId: string) => gateway.request('GET', `/api/v1/messages/${msgId}`, { key: ws.apiKey });
  const quotaUsed = async (ws: SeededWorkspace) => (await gateway.request('GET', '/api/v1/quota', { key: ws.apiKey })).body.quotas[0].used as number;

  it('cancels a queued message: 200, then gone (404), refunded with a refund ledger entry', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
    const keep = await queueOne(gateway, ws);
    const msgId = await queueOne(gateway, ws);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(9_400);
    expect((await workspaceOf(gateway, ws.workspaceId)).messages_used).toBe(2);

    const response = await cancel(ws, msgId);
    expectStatus(response, 200);
    expect(response.body).toEqual({ cancelled: true, msg_id: msgId });

    expectError(await get(ws, msgId), 'message_not_found');
    expect((await listAll(gateway, ws)).map((message) => message.msg_id)).toEqual([keep]);
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(9_700);
    expect(wallet.ledger[0]).toMatchObject({ kind: 'refund', amount: 300, balance_after: 9_700, message_count: 1, reference: msgId });
    expect(wallet.ledger.filter((entry) => entry.kind === 'refund')).toHaveLength(1);
    // A refunded message no longer counts against the account cap.
    expect((await workspaceOf(gateway, ws.workspaceId)).messages_used).toBe(1);

    expectError(await cancel(ws, msgId), 'message_not_found');
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(9_700);
    expect((await get(ws, keep)).body.status).toBe('queued');
  });

  it('cancels a scheduled message', async () => {
    const ws = await seedWorkspace(gateway);
    const msgId = await queueOne(gateway, ws, { send_at: new Date(Date.now() + 5 * DAY_MS).toISOString() });
    expectStatus(await cancel(ws, msgId), 200);
    expectError(await get(ws, msgId), 'message_not_found');
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000);
  });

  it('releases the daily quota reservation of a batch message', async () => {
    const ws = await seedWorkspace(gateway, { dailyQuota: 2 });
    const batch = await gateway.request('POST', '/api/v1/messages/batch', {
      key: ws.apiKey,
      body: { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }, { phone: '0912345679', template_data: VALID_DATA }] },
    });
    expect(batch.body.accepted).toBe(2);
    expect(await quotaUsed(ws)).toBe(2);
    expectStatus(await cancel(ws, batch.body.results[0].msg_id), 200);
    expect(await quotaUsed(ws)).toBe(1);
    const quota = (await gateway.request('GET', '/api/v1/quota', { key: ws.apiKey })).body.quotas[0];
    expect(quota).toMatchObject({ daily_quota: 2, used: 1, remaining: 1 });
    // The freed place can be used again.
    const again = await gateway.request('POST', '/api/v1/messages/batch', {
      key: ws.apiKey,
      body: { template_id: ws.templateId, recipients: [{ phone: '0912345670', template_data: VALID_DATA }, { phone: '0912345671', template_data: VALID_DATA }] },
    });
    expect(again.body.accepted).toBe(1);
  });

  it('releases the reservation and refunds an RSA message', async () => {
    const ws = await seedWorkspace(gateway, { dailyQuota: 5, balance: 1_000, price: 300 });
    const rsa = await gateway.request('POST', '/api/v1/messages/rsa', {
      key: ws.apiKey,
      body: { template_id: ws.templateId, recipients: [{ rsa_phone: rsaCiphertext(), template_data: VALID_DATA }] },
    });
    expect(await quotaUsed(ws)).toBe(1);
    expectStatus(await cancel(ws, rsa.body.results[0].msg_id), 200);
    expect(await quotaUsed(ws)).toBe(0);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000);
  });

  it.each(['sending', 'sent', 'delivered', 'failed'] as const)('is 409 for a %s message, which stays and is not refunded', async (status) => {
    const ws = await seedWorkspace(gateway, { balance: 1_000, price: 300 });
    const msgId = await queueOne(gateway, ws);
    await setMessageStatus(gateway, msgId, status);
    expectError(await cancel(ws, msgId), 'message_not_queued', new RegExp(status));
    const record = await get(ws, msgId);
    expectStatus(record, 200);
    expect(record.body.status).toBe(status);
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(700);
    expect(wallet.ledger.map((entry) => entry.kind)).toEqual(['charge', 'top_up']);
  });

  it('is 404 for an unknown id', async () => {
    const ws = await seedWorkspace(gateway);
    expectError(await cancel(ws, 'msg_DOESNOTEXIST'), 'message_not_found');
  });

  it.each(['application/json', 'text/plain;charset=UTF-8', 'application/octet-stream'])('ignores an empty body sent as %s on the bodiless POST', async (contentType) => {
    const ws = await seedWorkspace(gateway);
    const msgId = await queueOne(gateway, ws);
    const response = await gateway.request('POST', `/api/v1/messages/${msgId}/cancel`, { key: ws.apiKey, rawBody: '', headers: { 'content-type': contentType } });
    expectStatus(response, 200);
    expect(response.body).toEqual({ cancelled: true, msg_id: msgId });
  });
});
