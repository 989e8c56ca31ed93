/**
 * Operator identity and the audit log: named operator tokens (shown once, stored hashed, revocable,
 * TMS_ADMIN_TOKEN the bootstrap), and every operator change audited with who made it, before and
 * after, never a secret, through /admin/v1 and `tms admin`.
 * SQLite always; PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { STORE_KINDS, httpRequest, seedWorkspace, startTestGateway, type TestGateway } from '../harness.ts';
import { expectError, expectStatus } from '../api/helpers.ts';
import { consoleUserIn } from '../console-support.ts';
import { runAdminJson, runTms } from './processes.ts';

describe.each(STORE_KINDS)('operator tokens and the audit log (%s)', (kind) => {
  let gateway: TestGateway;
  const as = (token: string) => (method: string, path: string, body?: unknown) => httpRequest(gateway.url, method, `/admin/v1${path}`, { key: token, body });
  const audit = async (query = '') => (await gateway.admin('GET', `/audit${query}`)).body.entries as { action: string; workspace_id: string | null; actor: Record<string, unknown>; target: string | null; before: unknown; after: unknown }[];

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  it('shows a named token once, stores only its hash, and lets it act as the operator', async () => {
    const created = await gateway.admin('POST', '/operator-tokens', { name: 'lan (support)' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^opt_/),
      name: 'lan (support)',
      token: expect.stringMatching(/^tms_op_[A-Za-z0-9_-]{30,}$/),
      token_prefix: created.body.token.slice(0, 13),
      created_by: 'bootstrap token',
      created_at: expect.any(String),
      revoked_at: null,
    });
    const stored = await gateway.runtime.store.db.selectFrom('operator_tokens').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(stored.token_hash).toBe(sha256Hex(created.body.token));
    expect(JSON.stringify(stored)).not.toContain(created.body.token);
    const listed = await gateway.admin('GET', '/operator-tokens');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    expect(listed.body.operator_tokens).toContainEqual({ ...created.body, token: undefined });

    const lan = as(created.body.token);
    const workspace = await lan('POST', '/workspaces', { name: 'Made by Lan' });
    expect(workspace.status).toBe(201);
    expect((await httpRequest(gateway.url, 'GET', '/metrics', { key: created.body.token })).status).toBe(200);
    const entry = (await audit(`?workspace_id=${workspace.body.id}`)).find((row) => row.action === 'workspace.create');
    expect(entry).toMatchObject({ workspace_id: workspace.body.id, actor: { kind: 'operator', id: created.body.id, name: 'lan (support)' }, after: { name: 'Made by Lan' } });
    // The workspace's own activity log says "the operator", not which one.
    const activity = await gateway.admin('GET', `/workspaces/${workspace.body.id}/activity`);
    expect(activity.body.entries[0].actor).toEqual({ kind: 'operator', id: null, email: null });
  });

  it('refuses a revoked token, a made-up one and a duplicate active name; a revoked name can be used again', async () => {
    const created = (await gateway.admin('POST', '/operator-tokens', { name: 'ci deploy' })).body;
    expectError(await gateway.admin('POST', '/operator-tokens', { name: 'ci deploy' }), 'invalid_request');
    expect((await as(created.token)('GET', '/workspaces')).status).toBe(200);
    const revoked = await gateway.admin('POST', `/operator-tokens/${created.id}/revoke`);
    expect(revoked.body).toMatchObject({ id: created.id, revoked_at: expect.any(String) });
    expectError(await as(created.token)('GET', '/workspaces'), 'unauthenticated');
    expectError(await httpRequest(gateway.url, 'GET', '/metrics', { key: created.token }), 'unauthenticated');
    expectError(await as(`tms_op_${randomBytes(24).toString('base64url')}`)('GET', '/workspaces'), 'unauthenticated');
    expectError(await gateway.admin('POST', '/operator-tokens/opt_missing/revoke'), 'operator_token_not_found');
    expect((await gateway.admin('POST', '/operator-tokens', { name: 'ci deploy' })).status).toBe(201);
    const entries = await audit();
    expect(entries.find((row) => row.action === 'operator_token.revoke' && row.target === created.id)).toMatchObject({
      workspace_id: null,
      actor: { kind: 'operator', name: 'bootstrap token' },
      after: { name: 'ci deploy', revoked: true },
    });
  });

  it('audits every operator change with before and after values and never a secret', async () => {
    const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;
    const refreshToken = `refresh-${randomBytes(8).toString('hex')}`;
    const oaSecret = `oa-secret-${randomBytes(8).toString('hex')}`;
    const workspace = (await gateway.admin('POST', '/workspaces', { name: 'Audited shop', message_cap: 100 })).body;
    const id = workspace.id;
    await gateway.admin('POST', `/workspaces/${id}/suspend`);
    await gateway.admin('POST', `/workspaces/${id}/resume`);
    await gateway.admin('PUT', `/workspaces/${id}/message-cap`, { message_cap: 500 });
    await gateway.admin('POST', `/workspaces/${id}/wallet/top-ups`, { amount: 10_000, note: 'invoice 7' });
    const key = (await gateway.admin('POST', `/workspaces/${id}/api-keys`, { scopes: ['messages:send'], name: 'shop' })).body;
    await gateway.admin('PATCH', `/api-keys/${key.id}`, { webhook_url: 'https://hooks.example.com/tms?token=secret-in-query' });
    await gateway.admin('POST', `/api-keys/${key.id}/revoke`);
    const oaId = `oa${randomBytes(4).toString('hex')}`;
    await gateway.admin('PUT', `/workspaces/${id}/sender-accounts/${oaId}?verify=false`, { name: 'Shop OA', daily_quota: 1000, app_id: 'app-1', app_secret: appSecret, refresh_token: refreshToken, oa_secret_key: oaSecret });
    await gateway.admin('PUT', `/workspaces/${id}/templates/tpl${oaId}?verify=false`, {
      name: 'Shipped',
      status: 'ENABLE',
      template_type: 1,
      oa_id: oaId,
      price: 300,
      params: [{ name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 }],
    });

    const entries = (await audit(`?workspace_id=${id}`)).reverse();
    expect(entries.map((entry) => entry.action)).toEqual([
      'workspace.create',
      'workspace.suspend',
      'workspace.resume',
      'workspace.set_cap',
      'wallet.top_up',
      'api_key.create',
      'api_key.webhook_change',
      'api_key.revoke',
      'sender_account.connect',
      'template.register',
    ]);
    for (const entry of entries) expect(entry.actor).toEqual({ kind: 'operator', id: null, name: 'bootstrap token' });
    expect(entries[1]).toMatchObject({ before: { status: 'active' }, after: { status: 'suspended' } });
    expect(entries[3]).toMatchObject({ before: { message_cap: 100 }, after: { message_cap: 500 } });
    expect(entries[6]).toMatchObject({ before: { webhook_url: null }, after: { webhook_url: 'https://hooks.example.com/tms' } });
    expect(entries[8]).toMatchObject({ target: oaId, after: { app_id: 'app-1', has_oa_secret_key: true } });
    const everything = JSON.stringify(entries);
    for (const secret of [appSecret, refreshToken, oaSecret, key.key, 'secret-in-query']) expect(everything).not.toContain(secret);
  });

  it('keeps the values before a template is registered again and a sender account connected again, never a secret', async () => {
    const id = (await gateway.admin('POST', '/workspaces', { name: 'Changed twice' })).body.id;
    const oaId = `oa${randomBytes(4).toString('hex')}`;
    const secrets = Array.from({ length: 5 }, (_, index) => `secret-${index}-${randomBytes(8).toString('hex')}`);
    const connect = (body: Record<string, unknown>) => gateway.admin('PUT', `/workspaces/${id}/sender-accounts/${oaId}?verify=false`, body);
    const register = (body: Record<string, unknown>) =>
      gateway.admin('PUT', `/workspaces/${id}/templates/tpl${oaId}?verify=false`, {
        name: 'Shipped',
        template_type: 1,
        oa_id: oaId,
        params: [{ name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 }],
        ...body,
      });
    expectStatus(await connect({ name: 'Shop OA', daily_quota: 1000, app_id: 'app-1', app_secret: secrets[0], refresh_token: secrets[1], oa_secret_key: secrets[2] }), 200);
    expectStatus(await register({ status: 'ENABLE', price: 300 }), 200);
    expectStatus(await register({ status: 'DISABLE', price: 450 }), 200);
    expectStatus(await gateway.admin('POST', `/workspaces/${id}/sender-accounts/${oaId}/disconnect`), 200);
    expectStatus(await connect({ name: 'Shop OA (new app)', daily_quota: 2000, app_id: 'app-2', app_secret: secrets[3], refresh_token: secrets[4], default_mode: 'hashphone' }), 200);

    const entries = (await audit(`?workspace_id=${id}`)).reverse();
    const registrations = entries.filter((entry) => entry.action === 'template.register');
    const template = { oa_id: oaId, name: 'Shipped', template_type: 1, price_source: 'operator', params: ['code'], verified: false };
    expect(registrations.map((entry) => [entry.before, entry.after])).toEqual([
      [null, { ...template, status: 'ENABLE', price: 300 }],
      [
        { ...template, status: 'ENABLE', price: 300 },
        { ...template, status: 'DISABLE', price: 450 },
      ],
    ]);
    const connections = entries.filter((entry) => entry.action === 'sender_account.connect');
    const first = { name: 'Shop OA', default_mode: 'plain', daily_quota: 1000, app_id: 'app-1', has_oa_secret_key: true, has_rsa_public_key: false };
    expect(connections.map((entry) => [entry.before, entry.after])).toEqual([
      [null, { ...first, status: 'connected', verified: false }],
      [
        { ...first, status: 'disconnected' },
        { name: 'Shop OA (new app)', default_mode: 'hashphone', daily_quota: 2000, app_id: 'app-2', has_oa_secret_key: false, has_rsa_public_key: false, status: 'connected', verified: false },
      ],
    ]);
    const everything = JSON.stringify(entries);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });

  it("lists a console user's change with the console user as who made it", async () => {
    const workspace = await seedWorkspace(gateway);
    const developer = await consoleUserIn(gateway, workspace.workspaceId, 'developer');
    const created = await developer.request('POST', '/console/api/api-keys', { body: { name: 'From the console', scopes: ['messages:send'] } });
    expectStatus(created, 201);
    const entry = (await audit(`?workspace_id=${workspace.workspaceId}`)).find((row) => row.action === 'api_key.create' && row.target === created.body.id);
    expect(entry).toMatchObject({ workspace_id: workspace.workspaceId, actor: { kind: 'console_user', id: developer.userId, name: developer.email }, before: null, after: { name: 'From the console' } });
    expect(JSON.stringify(entry)).not.toContain(created.body.key);
  });

  it('names the person at the keyboard for tms admin, and lists the log there too', async () => {
    const env = {
      ...gateway.database.env,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
      TMS_LOG_LEVEL: 'silent',
    };
    const created = await runAdminJson(['operators', 'create', '--name', 'minh (billing)'], env);
    expect(created).toMatchObject({ name: 'minh (billing)', token: expect.stringMatching(/^tms_op_/), created_by: expect.stringMatching(/^tms admin \(.+@.+\)$/) });
    const workspace = await runAdminJson(['workspaces', 'create', '--name', 'From the shell'], env);
    const log = await runAdminJson(['audit', '--workspace', workspace.id], env);
    expect(log.entries).toEqual([expect.objectContaining({ action: 'workspace.create', actor: { kind: 'operator', id: null, name: created.created_by } })]);
    expect((await runAdminJson(['operators', 'list'], env)).operator_tokens.map((token: { name: string }) => token.name)).toContain('minh (billing)');
    expect(await runAdminJson(['operators', 'revoke', created.id], env)).toMatchObject({ id: created.id, revoked_at: expect.any(String) });
    const unknown = await runTms(['admin', 'operators', 'revoke', 'opt_missing'], env);
    expect(unknown.code).toBe(4);
  });
});
