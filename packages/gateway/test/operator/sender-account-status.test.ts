/**
 * Disconnecting and reconnecting a sender account, through /admin/v1 and `tms admin`: what a
 * customer's sends see, the audit log, and the refusals.
 * SQLite always; PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectError } from '../api/helpers.ts';
import { runAdminJson, runTms } from './processes.ts';

describe.each(STORE_KINDS)('sender account disconnect and reconnect (%s)', (kind) => {
  let gateway: TestGateway;
  let shop: SeededWorkspace;
  const send = () =>
    gateway.request('POST', '/api/v1/messages/send', { key: shop.apiKey, body: { template_id: shop.templateId, phone: '0912345678', template_data: VALID_DATA } });

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    shop = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  it('refuses sends while disconnected, sends again once reconnected, and audits both', async () => {
    expect((await send()).status).toBe(202);
    const disconnected = await gateway.admin('POST', `/workspaces/${shop.workspaceId}/sender-accounts/${shop.oaId}/disconnect`);
    expect(disconnected.status, disconnected.text).toBe(200);
    expect(disconnected.body).toMatchObject({ oa_id: shop.oaId, status: 'disconnected' });
    expectError(await send(), 'sender_account_not_connected');
    // Again: nothing changes, nothing more is audited.
    expect((await gateway.admin('POST', `/workspaces/${shop.workspaceId}/sender-accounts/${shop.oaId}/disconnect`)).body.status).toBe('disconnected');

    const reconnected = await gateway.admin('POST', `/workspaces/${shop.workspaceId}/sender-accounts/${shop.oaId}/reconnect?verify=false`);
    expect(reconnected.body).toMatchObject({ oa_id: shop.oaId, status: 'connected' });
    expect((await send()).status).toBe(202);

    const audit = (await gateway.admin('GET', `/audit?workspace_id=${shop.workspaceId}`)).body.entries.filter((entry: { action: string }) => entry.action.startsWith('sender_account.'));
    expect(audit.map((entry: { action: string; before: unknown; after: unknown }) => [entry.action, entry.before, entry.after])).toEqual([
      ['sender_account.reconnect', { status: 'disconnected' }, { status: 'connected' }],
      ['sender_account.disconnect', { status: 'connected' }, { status: 'disconnected' }],
      ['sender_account.connect', null, expect.objectContaining({ app_id: expect.any(String) })],
    ]);
  });

  it('refuses to reconnect an account that needs a new refresh token, and unknown accounts', async () => {
    const other = await seedWorkspace(gateway);
    await gateway.runtime.store.db.updateTable('sender_accounts').set({ status: 'relogin_required', token_problem: 'refresh token refused' }).where('oa_id', '=', other.oaId).execute();
    const refused = await gateway.admin('POST', `/workspaces/${other.workspaceId}/sender-accounts/${other.oaId}/reconnect?verify=false`);
    expectError(refused, 'invalid_request');
    expect(refused.body.error.message).toContain('needs a new refresh token');
    expectError(await gateway.admin('POST', `/workspaces/${other.workspaceId}/sender-accounts/oa-missing/disconnect`), 'sender_account_not_found');
    // Another workspace's account is as unknown as a missing one.
    expectError(await gateway.admin('POST', `/workspaces/${shop.workspaceId}/sender-accounts/${other.oaId}/disconnect`), 'sender_account_not_found');
    expectError(await gateway.admin('POST', `/workspaces/ws_missing/sender-accounts/${other.oaId}/disconnect`), 'workspace_not_found');
  });

  it('does the same through tms admin', async () => {
    const env = {
      ...gateway.database.env,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
      TMS_LOG_LEVEL: 'silent',
    };
    expect(await runAdminJson(['sender-accounts', 'disconnect', shop.workspaceId, shop.oaId], env)).toMatchObject({ status: 'disconnected' });
    expect(await runAdminJson(['sender-accounts', 'reconnect', shop.workspaceId, shop.oaId, '--no-verify'], env)).toMatchObject({ status: 'connected' });
    const missing = await runTms(['admin', 'sender-accounts', 'disconnect', shop.workspaceId], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('oa id is required');
  });
});
