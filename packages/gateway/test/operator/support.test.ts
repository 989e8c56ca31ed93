/**
 * The operator's support lookups, without the customer's API key: a message by msg_id in any
 * workspace, messages by tracking_id or phone within one workspace or across all, and a
 * workspace's quota, through /admin/v1 and `tms admin` on the same store.
 * SQLite always; PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectError } from '../api/helpers.ts';
import { runAdminJson, runTms } from './processes.ts';

describe.each(STORE_KINDS)('operator support lookups (%s)', (kind) => {
  let gateway: TestGateway;
  let shopA: SeededWorkspace;
  let shopB: SeededWorkspace;
  let cliEnv: Record<string, string>;
  const trackingId = `order-${randomBytes(4).toString('hex')}`;
  const sent: { workspaceId: string; msgId: string; phone: string }[] = [];

  const send = async (shop: SeededWorkspace, phone: string, tracking: string) => {
    const response = await gateway.request('POST', '/api/v1/messages/send', {
      key: shop.apiKey,
      body: { template_id: shop.templateId, phone, template_data: VALID_DATA, tracking_id: tracking },
    });
    expect(response.status, response.text).toBe(202);
    sent.push({ workspaceId: shop.workspaceId, msgId: response.body.msg_id, phone });
    return response.body.msg_id as string;
  };

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    shopA = await seedWorkspace(gateway);
    shopB = await seedWorkspace(gateway);
    // The same tracking_id in two workspaces (each customer numbers its own orders), and one phone in both.
    await send(shopA, '0912345678', trackingId);
    await send(shopA, '0987654321', `${trackingId}-other`);
    await send(shopB, '+84912345678', trackingId);
    cliEnv = {
      ...gateway.database.env,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
      TMS_LOG_LEVEL: 'silent',
      // As the test gateway: no platform to ask for quotas, the configured daily quota applies.
      TMS_PLATFORM_QUOTA_CACHE_MS: '0',
    };
  });
  afterAll(async () => gateway?.close());

  it('finds a message by msg_id in whichever workspace holds it, with that workspace', async () => {
    const [first, , third] = sent;
    const found = await gateway.admin('GET', `/messages/${third!.msgId}`);
    expect(found.status, found.text).toBe(200);
    const asCustomerSeesIt = await gateway.request('GET', `/api/v1/messages/${third!.msgId}`, { key: shopB.apiKey });
    expect(found.body).toEqual({ workspace_id: shopB.workspaceId, ...asCustomerSeesIt.body });
    expect((await gateway.admin('GET', `/messages/${first!.msgId}`)).body.workspace_id).toBe(shopA.workspaceId);
    expectError(await gateway.admin('GET', '/messages/msg_00000000000000000000000000'), 'message_not_found');
  });

  it('finds messages by tracking_id across workspaces, newest first, or within one', async () => {
    const across = await gateway.admin('GET', `/messages?tracking_id=${trackingId}`);
    expect(across.status, across.text).toBe(200);
    expect(across.body.messages.map((message: { msg_id: string; workspace_id: string }) => [message.workspace_id, message.msg_id])).toEqual([
      [shopB.workspaceId, sent[2]!.msgId],
      [shopA.workspaceId, sent[0]!.msgId],
    ]);
    expect(across.body).toMatchObject({ count: 2, has_more: false });

    const within = await gateway.admin('GET', `/messages?tracking_id=${trackingId}&workspace_id=${shopA.workspaceId}`);
    expect(within.body.messages.map((message: { msg_id: string }) => message.msg_id)).toEqual([sent[0]!.msgId]);
    const limited = await gateway.admin('GET', `/messages?tracking_id=${trackingId}&limit=1`);
    expect(limited.body).toMatchObject({ count: 1, has_more: true, messages: [{ msg_id: sent[2]!.msgId }] });
  });

  it('finds messages by phone written in any accepted form', async () => {
    for (const phone of ['0912345678', '84912345678', '+84 912 345 678']) {
      const found = await gateway.admin('GET', `/messages?phone=${encodeURIComponent(phone)}`);
      expect(found.body.messages.map((message: { msg_id: string }) => message.msg_id), phone).toEqual([sent[2]!.msgId, sent[0]!.msgId]);
    }
    const both = await gateway.admin('GET', `/messages?phone=0912345678&tracking_id=${trackingId}-other`);
    expect(both.body.count).toBe(0);
  });

  it('refuses a search without a tracking_id or phone, and an unknown workspace', async () => {
    const nothing = await gateway.admin('GET', '/messages');
    expectError(nothing, 'invalid_request');
    expect(nothing.body.error.message).toContain('give a tracking_id or a phone');
    expectError(await gateway.admin('GET', `/messages?tracking_id=${trackingId}&workspace_id=ws_missing`), 'workspace_not_found');
    expectError(await gateway.admin('GET', '/messages?tracking_id=x&limit=0'), 'invalid_request');
  });

  it("reads a workspace's quota as its customers see it", async () => {
    const operator = await gateway.admin('GET', `/workspaces/${shopA.workspaceId}/quota`);
    expect(operator.status, operator.text).toBe(200);
    const customer = await gateway.request('GET', '/api/v1/quota', { key: shopA.apiKey });
    expect(operator.body).toEqual({ workspace_id: shopA.workspaceId, ...customer.body });
    expect(operator.body.quotas).toEqual([expect.objectContaining({ oa_id: shopA.oaId, used: 2 })]);
    expectError(await gateway.admin('GET', `/workspaces/${shopA.workspaceId}/quota?oa_id=${shopB.oaId}`), 'sender_account_not_found');
    expectError(await gateway.admin('GET', '/workspaces/ws_missing/quota'), 'workspace_not_found');
  });

  it('answers the same through tms admin', async () => {
    expect(await runAdminJson(['messages', 'show', sent[1]!.msgId], cliEnv)).toEqual((await gateway.admin('GET', `/messages/${sent[1]!.msgId}`)).body);
    expect(await runAdminJson(['messages', 'find', '--tracking-id', trackingId], cliEnv)).toEqual((await gateway.admin('GET', `/messages?tracking_id=${trackingId}`)).body);
    const byPhone = await runAdminJson(['messages', 'find', '--phone', '0912345678', '--workspace', shopB.workspaceId], cliEnv);
    expect(byPhone.messages.map((message: { msg_id: string }) => message.msg_id)).toEqual([sent[2]!.msgId]);
    const quota = await runAdminJson(['quota', shopB.workspaceId], cliEnv);
    expect(quota).toMatchObject({ workspace_id: shopB.workspaceId, count: 1, quotas: [{ oa_id: shopB.oaId, used: 1 }] });

    // A platform that cannot be asked: the warning goes to standard error, the answer alone to standard output.
    const { TMS_PLATFORM_QUOTA_CACHE_MS: _off, ...withPlatform } = cliEnv;
    const unreachable = await runTms(['admin', 'quota', shopB.workspaceId, '--json'], { ...withPlatform, TMS_LOG_LEVEL: 'info', ZNS_API_URL: 'http://127.0.0.1:9', ZNS_OAUTH_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code, unreachable.stderr).toBe(0);
    expect(JSON.parse(unreachable.stdout)).toMatchObject({ quotas: [{ oa_id: shopB.oaId, error: expect.any(String) }] });
    expect(unreachable.stderr).toContain('platform quota lookup failed');

    const missing = await runTms(['admin', 'messages', 'show', 'msg_00000000000000000000000000'], cliEnv);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('message msg_00000000000000000000000000 not found');
  });
});
