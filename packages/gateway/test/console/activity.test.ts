/**
 * The activity page's API: the workspace's changes, newest first, paged, for owners only, with who
 * made each one, and nothing of another workspace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';

describe.each(STORE_KINDS)('console activity (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let owner: ConsoleSession;
  let developer: ConsoleSession;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
    owner = await consoleUserIn(gateway, workspace.workspaceId, 'owner');
    developer = await consoleUserIn(gateway, workspace.workspaceId, 'developer');
  });
  afterAll(async () => gateway?.close());

  it("lists the workspace's changes newest first, with who made them, page by page", async () => {
    const created = (await developer.request('POST', '/console/api/api-keys', { body: { name: 'Kho', scopes: ['templates:read'] } })).body;
    await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: 'https://kho.example.vn/hook' } });
    await owner.request('POST', `/console/api/api-keys/${created.id}/revoke`);
    const log = await owner.request('GET', '/console/api/activity');
    expectStatus(log, 200);
    expect(log.body.has_more).toBe(false);
    const mine = log.body.entries.filter((entry: any) => entry.target === created.id);
    expect(mine).toEqual([
      {
        id: expect.stringMatching(/^act_/),
        at: expect.stringMatching(ISO_UTC_MS),
        actor: { kind: 'console_user', id: owner.userId, email: owner.email },
        action: 'api_key.revoke',
        target: created.id,
        before: { revoked_at: null },
        after: { revoked_at: expect.stringMatching(ISO_UTC_MS) },
      },
      expect.objectContaining({ action: 'api_key.webhook_change', actor: { kind: 'console_user', id: developer.userId, email: developer.email }, before: { webhook_url: null }, after: { webhook_url: 'https://kho.example.vn/hook' } }),
      expect.objectContaining({ action: 'api_key.create', actor: expect.objectContaining({ id: developer.userId }) }),
    ]);
    const first = (await owner.request('GET', '/console/api/activity?limit=1')).body;
    const second = (await owner.request('GET', '/console/api/activity?limit=1&offset=1')).body;
    expect(first).toMatchObject({ has_more: true, entries: [{ action: 'api_key.revoke' }] });
    expect(second.entries[0].action).toBe('api_key.webhook_change');
    expectError(await owner.request('GET', '/console/api/activity?limit=0'), 'invalid_request');
    expectError(await owner.request('GET', '/console/api/activity?limit=201'), 'invalid_request');
  });

  it("keeps a webhook URL's query out of the log: receivers often put a token there", async () => {
    const created = (await developer.request('POST', '/console/api/api-keys', { body: { name: 'Token in URL', scopes: ['templates:read'] } })).body;
    expectStatus(await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: 'https://kho.example.vn/hook?token=SECRET123#frag' } }), 200);
    const entry = (await owner.request('GET', '/console/api/activity')).body.entries.find((item: any) => item.target === created.id && item.action === 'api_key.webhook_change');
    expect(entry.after).toEqual({ webhook_url: 'https://kho.example.vn/hook' });
    expect(JSON.stringify((await owner.request('GET', '/console/api/activity?limit=200')).body)).not.toContain('SECRET123');
  });

  it('is for owners only', async () => {
    expectError(await developer.request('GET', '/console/api/activity'), 'forbidden_role');
    const viewer = await consoleUserIn(gateway, workspace.workspaceId, 'viewer');
    expectError(await viewer.request('GET', '/console/api/activity'), 'forbidden_role');
  });

  it("shows nothing of another workspace's changes", async () => {
    const other = await seedWorkspace(gateway);
    const otherOwner = await consoleUserIn(gateway, other.workspaceId, 'owner');
    const key = (await otherOwner.request('POST', '/console/api/api-keys', { body: { name: 'theirs', scopes: ['templates:read'] } })).body;
    expect((await owner.request('GET', '/console/api/activity?limit=200')).text).not.toContain(key.id);
    // Its own: the console's key, the operator's invitation and the operator's set-up of the workspace.
    expect((await otherOwner.request('GET', '/console/api/activity')).body.entries.map((entry: any) => entry.action)).toEqual([
      'api_key.create',
      'team.invite',
      'api_key.create',
      'template.register',
      'sender_account.connect',
      'wallet.top_up',
      'workspace.create',
    ]);
  });
});
