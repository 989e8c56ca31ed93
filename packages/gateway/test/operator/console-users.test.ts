/**
 * The operator's side of the console: inviting a workspace's first owner (on /admin/v1 and with
 * `tms admin users`), listing its users, reading its activity log (also `tms admin activity`),
 * and the demo owner `npm start` prints.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { printStartBanner } from '../../src/main/banner.ts';
import { createWorkspace } from '../../src/services/admin/workspaces.ts';
import { DEMO_OWNER_EMAIL, ensureDemoOwner } from '../../src/services/demo.ts';
import { STORE_KINDS, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus } from '../api/helpers.ts';
import { invitationTokenOf, signInConsole } from '../console-support.ts';
import { runAdminJson, runTms } from './processes.ts';

const CLI_TIMEOUT_MS = 60_000;

describe.each(STORE_KINDS)('console users, operator side (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  /** Environment for `tms admin` on this gateway's store, with its secrets. */
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
    cliEnv = {
      ...gateway.database.env,
      TMS_LOG_LEVEL: 'silent',
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
      HOST: '127.0.0.1',
      PORT: '3999',
    };
  });
  afterAll(async () => gateway?.close());

  it('invites the first owner, who sets a password with the link and signs in as owner', async () => {
    const invited = await gateway.admin('POST', `/workspaces/${workspace.workspaceId}/users`, { email: ' Chu@HoaSen.vn ', role: 'owner' });
    expectStatus(invited, 201);
    expect(invited.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: 'chu@hoasen.vn', role: 'owner', status: 'invited', created_at: expect.stringMatching(ISO_UTC_MS), last_sign_in_at: null },
      invitation_url: expect.stringMatching(new RegExp(`^${gateway.url}/console/invitations/[A-Za-z0-9_-]{20,}$`)),
      expires_at: expect.stringMatching(ISO_UTC_MS),
    });
    expect(Date.parse(invited.body.expires_at) - Date.parse(invited.body.user.created_at)).toBe(72 * 3600 * 1000);
    const token = invitationTokenOf(invited.body.invitation_url);
    const accepted = await httpRequest(gateway.url, 'POST', `/console/api/invitations/${token}/accept`, { body: { password: 'một mật khẩu dài' } });
    expectStatus(accepted, 200);
    const owner = await signInConsole(gateway, 'chu@hoasen.vn', 'một mật khẩu dài');
    expect(owner.role).toBe('owner');
    expectStatus(await owner.request('GET', '/console/api/activity'), 200);
    const users = await gateway.admin('GET', `/workspaces/${workspace.workspaceId}/users`);
    expectStatus(users, 200);
    expect(users.body.count).toBe(1);
    expect(users.body.users[0]).toMatchObject({ email: 'chu@hoasen.vn', role: 'owner', status: 'active', last_sign_in_at: expect.stringMatching(ISO_UTC_MS) });
    // The link worked once.
    expectError(await httpRequest(gateway.url, 'POST', `/console/api/invitations/${token}/accept`, { body: { password: 'another long one' } }), 'invitation_not_found');
  });

  it('refuses an address already in use, an unknown role and an unknown workspace', async () => {
    const email = `dev.${Date.now()}@hoasen.vn`;
    expectStatus(await gateway.admin('POST', `/workspaces/${workspace.workspaceId}/users`, { email, role: 'developer' }), 201);
    const other = await seedWorkspace(gateway);
    expectError(await gateway.admin('POST', `/workspaces/${other.workspaceId}/users`, { email: email.toUpperCase(), role: 'viewer' }), 'console_user_taken');
    expectError(await gateway.admin('POST', `/workspaces/${workspace.workspaceId}/users`, { email: `x.${email}`, role: 'admin' }), 'invalid_request');
    expectError(await gateway.admin('POST', `/workspaces/${workspace.workspaceId}/users`, { email: 'not an address', role: 'viewer' }), 'invalid_request');
    expectError(await gateway.admin('POST', '/workspaces/ws_nope/users', { email: `y.${email}`, role: 'owner' }), 'workspace_not_found');
    expectError(await gateway.admin('GET', '/workspaces/ws_nope/users'), 'workspace_not_found');
    expectError(await gateway.admin('GET', '/workspaces/ws_nope/activity'), 'workspace_not_found');
    expectError(await httpRequest(gateway.url, 'GET', `/admin/v1/workspaces/${workspace.workspaceId}/users`), 'unauthenticated');
  });

  it("reads a workspace's activity: the operator's invitations and the console's changes, newest first", async () => {
    const fresh = await seedWorkspace(gateway);
    const invited = (await gateway.admin('POST', `/workspaces/${fresh.workspaceId}/users`, { email: `owner.${Date.now()}@shop.vn`, role: 'owner' })).body;
    await httpRequest(gateway.url, 'POST', `/console/api/invitations/${invitationTokenOf(invited.invitation_url)}/accept`, { body: { password: 'a long password' } });
    const owner = await signInConsole(gateway, invited.user.email, 'a long password');
    const key = (await owner.request('POST', '/console/api/api-keys', { body: { name: 'POS', scopes: ['messages:send'] } })).body;
    const log = await gateway.admin('GET', `/workspaces/${fresh.workspaceId}/activity`);
    expectStatus(log, 200);
    // The console's key and the operator's invitation, then the operator's set-up of the workspace (seedWorkspace).
    expect(log.body).toMatchObject({ count: 7, has_more: false });
    expect(log.body.entries.slice(0, 2)).toEqual([
      expect.objectContaining({ action: 'api_key.create', target: key.id, actor: { kind: 'console_user', id: invited.user.id, email: invited.user.email } }),
      expect.objectContaining({ action: 'team.invite', target: invited.user.id, actor: { kind: 'operator', id: null, email: null }, before: null, after: { email: invited.user.email, role: 'owner' } }),
    ]);
    expect(log.body.entries.slice(2).map((entry: { action: string }) => entry.action)).toEqual(['api_key.create', 'template.register', 'sender_account.connect', 'wallet.top_up', 'workspace.create']);
    const page = await gateway.admin('GET', `/workspaces/${fresh.workspaceId}/activity?limit=1`);
    expect(page.body).toMatchObject({ count: 1, has_more: true });
    expect(page.body.entries[0].action).toBe('api_key.create');
    // Another workspace's log has none of it.
    expect((await gateway.admin('GET', `/workspaces/${workspace.workspaceId}/activity`)).text).not.toContain(key.id);
  });

  it(
    'does the same with tms admin users and tms admin activity',
    async () => {
      const email = `cli.${Date.now()}@shop.vn`;
      const invited = await runAdminJson(['users', 'invite', workspace.workspaceId, '--email', email, '--role', 'owner', '--json'], cliEnv);
      expect(invited).toMatchObject({ user: { email, role: 'owner', status: 'invited' }, invitation_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3999\/console\/invitations\//) });
      // The link works on the running gateway.
      expectStatus(await httpRequest(gateway.url, 'POST', `/console/api/invitations/${invitationTokenOf(invited.invitation_url)}/accept`, { body: { password: 'set from the CLI link' } }), 200);
      const listed = await runTms(['admin', 'users', 'list', workspace.workspaceId], cliEnv);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`${invited.user.id}\\s+${email.replace(/\./g, '\\.')}\\s+owner\\s+active`));
      const activity = await runTms(['admin', 'activity', workspace.workspaceId, '--limit', '5'], cliEnv);
      expect(activity.code, activity.stderr).toBe(0);
      expect(activity.stdout).toContain('team.invite');
      expect(activity.stdout).toContain(invited.user.id);
      expect(activity.stdout).toContain('"kind":"operator"');
      const refused = await runTms(['admin', 'users', 'invite', workspace.workspaceId, '--email', `x.${email}`, '--role', 'boss'], cliEnv);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--role must be one of viewer, developer, owner');
      const missing = await runTms(['admin', 'activity'], cliEnv);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('workspace id is required');
    },
    CLI_TIMEOUT_MS,
  );

  it('gives the demo workspace an owner who can sign in, the same on every start, and prints the sign-in', async () => {
    const ctx = gateway.runtime.contextFor({ kind: 'operator' });
    // Only one demo owner address exists per store; another suite's demo may have it on this store kind.
    const demo = await createWorkspace({ ctx, input: { name: 'Demo workspace', is_demo: true } });
    const first = await ensureDemoOwner({ ctx, input: { workspaceId: demo.id } });
    expect(first).toEqual({ email: DEMO_OWNER_EMAIL, password: expect.stringMatching(/^[A-Za-z0-9_-]{20}$/) });
    expect(await ensureDemoOwner({ ctx, input: { workspaceId: demo.id } })).toEqual(first);
    const session = await signInConsole(gateway, DEMO_OWNER_EMAIL, first!.password!);
    expect(session).toMatchObject({ role: 'owner', workspaceId: demo.id });
    const users = (await gateway.admin('GET', `/workspaces/${demo.id}/users`)).body.users;
    expect(users).toHaveLength(1);
    // The address belongs to that demo: another workspace gets no demo owner.
    expect(await ensureDemoOwner({ ctx, input: { workspaceId: workspace.workspaceId } })).toBeNull();

    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((text: string) => printed.push(text));
    try {
      const credentials = { workspaceId: demo.id, apiKeyId: 'key_x', apiKey: 'tms_live_x', created: false };
      printStartBanner({ config: gateway.config, url: 'http://127.0.0.1:3000', generated: [], secretsFile: null, adminTokenFromFile: false, demo: credentials, demoOwner: first });
    } finally {
      log.mockRestore();
    }
    expect(printed.join('\n')).toContain('http://127.0.0.1:3000/console');
    expect(printed.join('\n')).toContain(`e-mail ${DEMO_OWNER_EMAIL}   password ${first!.password}`);
  });
});

describe('invitation links behind a proxy', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway('sqlite', { env: { TMS_PUBLIC_URL: 'https://tms.hoasen.vn' } });
  });
  afterAll(async () => gateway?.close());

  it('start with TMS_PUBLIC_URL', async () => {
    const workspace = await seedWorkspace(gateway);
    const invited = await gateway.admin('POST', `/workspaces/${workspace.workspaceId}/users`, { email: 'chu@hoasen.vn', role: 'owner' });
    expectStatus(invited, 201);
    expect(invited.body.invitation_url).toMatch(/^https:\/\/tms\.hoasen\.vn\/console\/invitations\/[A-Za-z0-9_-]{20,}$/);
  });
});
