/**
 * The team page's API: owners invite people (the link is shown, not mailed), change roles and
 * remove members, whose sessions end at once; a workspace always keeps an owner; everyone can see
 * the team; every change is in the activity log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus } from '../api/helpers.ts';
import { consoleUserIn, invitationTokenOf, signInConsole, type ConsoleSession } from '../console-support.ts';

describe.each(STORE_KINDS)('console team (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let owner: ConsoleSession;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
    owner = await consoleUserIn(gateway, workspace.workspaceId, 'owner');
  });
  afterAll(async () => gateway?.close());

  let inviteCounter = 0;
  const invite = async (role: string, by: ConsoleSession = owner) => {
    inviteCounter += 1;
    const response = await by.request('POST', '/console/api/team/invitations', { body: { email: `member${inviteCounter}.${Date.now()}@hoasen.vn`, role } });
    expectStatus(response, 201);
    return response.body;
  };
  const join = async (invitation: any, password = 'a long enough password') => {
    expectStatus(await httpRequest(gateway.url, 'POST', `/console/api/invitations/${invitationTokenOf(invitation.invitation_url)}/accept`, { body: { password } }), 200);
    return signInConsole(gateway, invitation.user.email, password);
  };
  const teamOf = async (session: ConsoleSession) => (await session.request('GET', '/console/api/team')).body.users as any[];

  it('invites a developer with a link that works once, and lists them as invited, then active', async () => {
    const invitation = await invite('developer');
    expect(invitation).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: invitation.user.email, role: 'developer', status: 'invited', created_at: expect.stringMatching(ISO_UTC_MS), last_sign_in_at: null },
      invitation_url: expect.stringMatching(new RegExp(`^${gateway.url}/console/invitations/`)),
      expires_at: expect.stringMatching(ISO_UTC_MS),
    });
    expect((await teamOf(owner)).find((user) => user.id === invitation.user.id)).toMatchObject({ status: 'invited' });
    const details = await httpRequest(gateway.url, 'GET', `/console/api/invitations/${invitationTokenOf(invitation.invitation_url)}`);
    expect(details.body).toMatchObject({ email: invitation.user.email, role: 'developer', workspace: { id: workspace.workspaceId } });
    const developer = await join(invitation);
    expect(developer.role).toBe('developer');
    const listed = (await teamOf(developer)).find((user) => user.id === invitation.user.id);
    expect(listed).toMatchObject({ status: 'active', last_sign_in_at: expect.stringMatching(ISO_UTC_MS) });
    const entry = (await owner.request('GET', '/console/api/activity')).body.entries.find((item: any) => item.target === invitation.user.id);
    expect(entry).toMatchObject({ action: 'team.invite', actor: { kind: 'console_user', id: owner.userId }, after: { email: invitation.user.email, role: 'developer' } });
    expect(JSON.stringify(entry)).not.toContain(invitationTokenOf(invitation.invitation_url));
  });

  it('refuses an address that already has an account, in any workspace; a pending invitee of this one gets a new link', async () => {
    const invitation = await invite('viewer');
    const again = await owner.request('POST', '/console/api/team/invitations', { body: { email: invitation.user.email, role: 'developer' } });
    expectStatus(again, 201);
    expect(again.body.user).toMatchObject({ id: invitation.user.id, role: 'developer', status: 'invited' });
    expect(again.body.invitation_url).not.toBe(invitation.invitation_url);
    expectError(await httpRequest(gateway.url, 'GET', `/console/api/invitations/${invitationTokenOf(invitation.invitation_url)}`), 'invitation_not_found');
    const otherOwner = await consoleUserIn(gateway, (await seedWorkspace(gateway)).workspaceId, 'owner');
    expectError(await otherOwner.request('POST', '/console/api/team/invitations', { body: { email: invitation.user.email.toUpperCase(), role: 'owner' } }), 'console_user_taken');
    expectError(await owner.request('POST', '/console/api/team/invitations', { body: { email: 'someone@hoasen.vn', role: 'admin' } }), 'invalid_request');
  });

  it('changes a role, which takes effect on the next request', async () => {
    const member = await join(await invite('viewer'));
    expectError(await member.request('POST', '/console/api/api-keys', { body: { name: 'k', scopes: ['messages:read'] } }), 'forbidden_role');
    const changed = await owner.request('PATCH', `/console/api/team/${member.userId}`, { body: { role: 'developer' } });
    expectStatus(changed, 200);
    expect(changed.body).toMatchObject({ id: member.userId, role: 'developer', status: 'active' });
    expectStatus(await member.request('POST', '/console/api/api-keys', { body: { name: 'k', scopes: ['messages:read'] } }), 201);
    const entry = (await owner.request('GET', '/console/api/activity')).body.entries.find((item: any) => item.action === 'team.role_change' && item.target === member.userId);
    expect(entry).toMatchObject({ before: { role: 'viewer' }, after: { role: 'developer' } });
  });

  it('removes a member: their sessions end at once and the address can be invited again', async () => {
    const invitation = await invite('developer');
    const member = await join(invitation);
    expectStatus(await member.request('GET', '/console/api/team'), 200);
    const removed = await owner.request('DELETE', `/console/api/team/${member.userId}`);
    expectStatus(removed, 204);
    expect(removed.text).toBe('');
    expectError(await member.request('GET', '/console/api/team'), 'unauthenticated');
    expectError(await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: invitation.user.email, password: 'a long enough password' } }), 'invalid_credentials');
    expect((await teamOf(owner)).map((user) => user.id)).not.toContain(member.userId);
    expectError(await owner.request('DELETE', `/console/api/team/${member.userId}`), 'console_user_not_found');
    const entry = (await owner.request('GET', '/console/api/activity')).body.entries.find((item: any) => item.action === 'team.remove' && item.target === member.userId);
    expect(entry).toMatchObject({ before: { email: invitation.user.email, role: 'developer' }, after: null });
    expectStatus(await owner.request('POST', '/console/api/team/invitations', { body: { email: invitation.user.email, role: 'viewer' } }), 201);
  });

  it('never leaves the workspace without an owner', async () => {
    const lonely = await seedWorkspace(gateway);
    const only = await consoleUserIn(gateway, lonely.workspaceId, 'owner');
    expectError(await only.request('PATCH', `/console/api/team/${only.userId}`, { body: { role: 'developer' } }), 'last_owner');
    expectError(await only.request('DELETE', `/console/api/team/${only.userId}`), 'last_owner');
    expect((await teamOf(only))[0]).toMatchObject({ id: only.userId, role: 'owner' });
    // With a second owner, either can step down, but not both.
    const second = await join(await invite('owner', only));
    expectStatus(await only.request('PATCH', `/console/api/team/${only.userId}`, { body: { role: 'viewer' } }), 200);
    expectError(await second.request('DELETE', `/console/api/team/${second.userId}`), 'last_owner');
    // Two owners demoting each other at the same moment leave one owner.
    expectStatus(await second.request('PATCH', `/console/api/team/${only.userId}`, { body: { role: 'owner' } }), 200);
    const results = await Promise.all([
      only.request('PATCH', `/console/api/team/${second.userId}`, { body: { role: 'viewer' } }),
      second.request('PATCH', `/console/api/team/${only.userId}`, { body: { role: 'viewer' } }),
    ]);
    // The loser is refused as the last owner, or (when the winner committed before its role was checked) as no owner any more.
    const [won, lost] = results.map((result) => result.status).sort();
    expect(won).toBe(200);
    expect([403, 409]).toContain(lost);
    expect((await teamOf(second)).filter((user) => user.role === 'owner')).toHaveLength(1);
  });

  it('does not count an owner who never set a password: the last owner who can sign in stays owner', async () => {
    const alone = await seedWorkspace(gateway);
    const founder = await consoleUserIn(gateway, alone.workspaceId, 'owner');
    const invited = await founder.request('POST', '/console/api/team/invitations', { body: { email: `later.${Date.now()}@example.vn`, role: 'owner' } });
    expectStatus(invited, 201);
    expectError(await founder.request('PATCH', `/console/api/team/${founder.userId}`, { body: { role: 'viewer' } }), 'last_owner');
    expectError(await founder.request('DELETE', `/console/api/team/${founder.userId}`), 'last_owner');
    // The invited owner can be removed: the one who signs in is still there.
    expect((await founder.request('DELETE', `/console/api/team/${invited.body.user.id}`)).status).toBe(204);
  });

  it("does not reach another workspace's people", async () => {
    const other = await seedWorkspace(gateway);
    const stranger = await consoleUserIn(gateway, other.workspaceId, 'developer');
    expectError(await owner.request('PATCH', `/console/api/team/${stranger.userId}`, { body: { role: 'viewer' } }), 'console_user_not_found');
    expectError(await owner.request('DELETE', `/console/api/team/${stranger.userId}`), 'console_user_not_found');
    expect((await teamOf(owner)).map((user) => user.id)).not.toContain(stranger.userId);
    expectStatus(await stranger.request('GET', '/console/api/team'), 200);
  });
});
