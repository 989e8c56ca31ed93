/**
 * Console sign-in and sessions: what a person signing in (and an attacker) can observe. Passwords
 * are checked without saying whether the address exists, failures are throttled, cookies are
 * HttpOnly and SameSite, sessions end on sign-out, everywhere, when idle and at their absolute end,
 * and changes need the session's CSRF token from the console's own origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteConsoleUser } from '../../src/services/console/users.ts';
import { STORE_KINDS, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectError } from '../api/helpers.ts';
import { consoleUserIn, createConsoleUser, invitationTokenOf, sessionCookieOf, signInConsole } from '../console-support.ts';

describe.each(STORE_KINDS)('console sessions (%s)', (kind) => {
  let now = Date.now();
  let gateway: TestGateway;
  let workspace: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { clock: () => now, env: { TMS_CONSOLE_SESSION_IDLE_MINUTES: '30', TMS_CONSOLE_SESSION_HOURS: '12' } });
    workspace = await seedWorkspace(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('signs in with the password set through the invitation, with a cookie scripts and other sites cannot use', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'developer');
    const response = await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email.toUpperCase(), password: user.password } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ user: { id: user.userId, email: user.email, role: 'developer' }, workspace: { id: workspace.workspaceId } });
    expect(response.body.csrf_token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const setCookie = response.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^tms_console_session=[A-Za-z0-9_-]{40,}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const session = await httpRequest(gateway.url, 'GET', '/console/api/session', { headers: { cookie: sessionCookieOf(response) } });
    expect(session.status).toBe(200);
    expect(session.body.user.email).toBe(user.email);
  });

  it('answers a wrong password and an unknown address alike', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'viewer');
    const wrongPassword = await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: 'not the password' } });
    const unknown = await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: `nobody.${user.email}`, password: 'not the password' } });
    expectError(wrongPassword, 'invalid_credentials');
    expectError(unknown, 'invalid_credentials');
    expect(unknown.body.error.message).toBe(wrongPassword.body.error.message);
    expect(wrongPassword.headers.get('set-cookie')).toBeNull();
  });

  it('pauses sign-in to an account after five failures, even with the right password, and says when to retry', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'viewer');
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expectError(await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: `guess ${attempt}` } }), 'invalid_credentials');
    }
    const blocked = await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: user.password } });
    expectError(blocked, 'rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    now += 16 * 60_000;
    expect((await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: user.password } })).status).toBe(200);
  });

  it('refuses a sign-in posted from another site', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'viewer');
    const response = await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: user.password }, headers: { origin: 'https://evil.example' } });
    expectError(response, 'csrf_failed');
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('needs the CSRF token for a change: without or with a wrong one the session stays', async () => {
    const session = await consoleUserIn(gateway, workspace.workspaceId, 'viewer');
    expectError(await session.request('DELETE', '/console/api/session', { csrf: false }), 'csrf_failed');
    expectError(await session.request('DELETE', '/console/api/session', { csrf: false, headers: { 'x-csrf-token': 'wrong' } }), 'csrf_failed');
    expect((await session.request('GET', '/console/api/session')).status).toBe(200);
    const signedOut = await session.request('DELETE', '/console/api/session');
    expect(signedOut.status).toBe(204);
    expect(signedOut.headers.get('set-cookie')).toMatch(/^tms_console_session=; .*Max-Age=0/);
    expectError(await session.request('GET', '/console/api/session'), 'unauthenticated');
  });

  it('signs out everywhere: every session of the user ends, other users stay signed in', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'developer');
    const laptop = await signInConsole(gateway, user.email, user.password);
    const phone = await signInConsole(gateway, user.email, user.password);
    const colleague = await consoleUserIn(gateway, workspace.workspaceId, 'developer');
    expect((await laptop.request('POST', '/console/api/session/sign-out-everywhere')).status).toBe(204);
    expectError(await laptop.request('GET', '/console/api/session'), 'unauthenticated');
    expectError(await phone.request('GET', '/console/api/session'), 'unauthenticated');
    expect((await colleague.request('GET', '/console/api/session')).status).toBe(200);
  });

  it('ends a session after 30 idle minutes, and any session 12 hours after sign-in', async () => {
    const idle = await consoleUserIn(gateway, workspace.workspaceId, 'viewer');
    now += 29 * 60_000;
    expect((await idle.request('GET', '/console/api/session')).status).toBe(200);
    now += 29 * 60_000;
    expect((await idle.request('GET', '/console/api/session')).status).toBe(200);
    now += 31 * 60_000;
    expectError(await idle.request('GET', '/console/api/session'), 'unauthenticated');

    const busy = await consoleUserIn(gateway, workspace.workspaceId, 'viewer');
    for (let hour = 0; hour < 11; hour += 1) {
      now += 20 * 60_000;
      expect((await busy.request('GET', '/console/api/session')).status).toBe(200);
      now += 20 * 60_000;
      expect((await busy.request('GET', '/console/api/session')).status).toBe(200);
      now += 20 * 60_000;
      expect((await busy.request('GET', '/console/api/session')).status).toBe(200);
    }
    now += 61 * 60_000;
    expectError(await busy.request('GET', '/console/api/session'), 'unauthenticated');
  });

  it('lets an invitation link set a password once; the link then stops working', async () => {
    const email = `invitee.${Date.now()}@example.vn`;
    const invitation = await inviteConsoleUser({ ctx: gateway.runtime.contextFor({ kind: 'operator' }), input: { workspaceId: workspace.workspaceId, email, role: 'owner', origin: gateway.url } });
    expect(invitation.invitationUrl).toMatch(new RegExp(`^${gateway.url}/console/invitations/inv_[A-Za-z0-9_-]{40,}$`));
    const token = invitationTokenOf(invitation.invitationUrl);
    const shown = await httpRequest(gateway.url, 'GET', `/console/api/invitations/${token}`);
    expect(shown.body).toMatchObject({ email, role: 'owner', workspace: { id: workspace.workspaceId } });
    expectError(await httpRequest(gateway.url, 'POST', `/console/api/invitations/${token}/accept`, { body: { password: 'short' } }), 'invalid_request');
    const accepted = await httpRequest(gateway.url, 'POST', `/console/api/invitations/${token}/accept`, { body: { password: 'a long enough password' } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user.role).toBe('owner');
    expectError(await httpRequest(gateway.url, 'POST', `/console/api/invitations/${token}/accept`, { body: { password: 'another long password' } }), 'invitation_not_found');
    expectError(await httpRequest(gateway.url, 'GET', `/console/api/invitations/${token}`), 'invitation_not_found');
    expect((await signInConsole(gateway, email, 'a long enough password')).role).toBe('owner');
  });

  it('refuses an invitation link after it expires (72 hours); inviting the address again gives a new link that works', async () => {
    const email = `late.${Date.now()}@example.vn`;
    const invite = () => inviteConsoleUser({ ctx: gateway.runtime.contextFor({ kind: 'operator' }), input: { workspaceId: workspace.workspaceId, email, role: 'owner', origin: gateway.url } });
    const lapsed = await invite();
    now += 73 * 60 * 60_000;
    const accept = (url: string) => httpRequest(gateway.url, 'POST', `/console/api/invitations/${invitationTokenOf(url)}/accept`, { body: { password: 'a long enough password' } });
    expectError(await accept(lapsed.invitationUrl), 'invitation_not_found');
    const renewed = await invite();
    expect(renewed.user.id).toBe(lapsed.user.id);
    expect((await accept(renewed.invitationUrl)).status).toBe(200);
    // Once the password is set, the address is taken for good.
    await expect(invite()).rejects.toMatchObject({ type: 'console_user_taken' });
  });

  it('lets only one of two acceptances of the same link at once through', async () => {
    const invitation = await inviteConsoleUser({
      ctx: gateway.runtime.contextFor({ kind: 'operator' }),
      input: { workspaceId: workspace.workspaceId, email: `race.${Date.now()}@example.vn`, role: 'viewer', origin: gateway.url },
    });
    const path = `/console/api/invitations/${invitationTokenOf(invitation.invitationUrl)}/accept`;
    const [first, second] = await Promise.all([
      httpRequest(gateway.url, 'POST', path, { body: { password: 'the first password' } }),
      httpRequest(gateway.url, 'POST', path, { body: { password: 'the second password' } }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 404]);
    const winner = first.status === 200 ? 'the first password' : 'the second password';
    const loser = first.status === 200 ? 'the second password' : 'the first password';
    expect((await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: invitation.user.email, password: loser } })).status).toBe(401);
    expect((await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: invitation.user.email, password: winner } })).status).toBe(200);
  });

  it('counts sign-in attempts sent all at once: twenty wrong passwords in parallel get no more than five checks', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'viewer');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, attempt) => httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: `parallel guess ${attempt}` } })),
    );
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(15);
  });

  it('answers an unknown console API path with the API error, not the app page', async () => {
    const response = await httpRequest(gateway.url, 'GET', '/console/api/no-such-thing');
    expectError(response, 'route_not_found');
  });

  it('ends the sessions of a suspended workspace and refuses its sign-ins', async () => {
    const other = await seedWorkspace(gateway);
    const user = await createConsoleUser(gateway, other.workspaceId, 'owner');
    const session = await signInConsole(gateway, user.email, user.password);
    expect((await gateway.admin('POST', `/workspaces/${other.workspaceId}/suspend`)).status).toBe(200);
    expectError(await session.request('GET', '/console/api/session'), 'workspace_suspended');
    expectError(await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email: user.email, password: user.password } }), 'invalid_credentials');
  });

  it('refuses a change posted with a form instead of JSON (what another site could send)', async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'viewer');
    const form = await httpRequest(gateway.url, 'POST', '/console/api/session', {
      rawBody: `email=${encodeURIComponent(user.email)}&password=${encodeURIComponent(user.password)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.headers.get('set-cookie')).toBeNull();
  });

  it('serves the console pages under a strict Content-Security-Policy that forbids framing', async () => {
    const page = await httpRequest(gateway.url, 'GET', '/console/messages');
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe.each(STORE_KINDS)('console sign-in behind a reverse proxy (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { env: { TMS_TRUST_PROXY: 'true' } });
    workspace = await seedWorkspace(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("throttles each client by its own address (X-Forwarded-For), not the proxy's", async () => {
    const user = await createConsoleUser(gateway, workspace.workspaceId, 'viewer');
    const signIn = (email: string, client: string, password = 'wrong password') =>
      httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email, password }, headers: { 'x-forwarded-for': client } });
    // Thirty failures from one client, over many addresses, close sign-in from there …
    for (let attempt = 0; attempt < 30; attempt += 1) expectError(await signIn(`guess${attempt}@example.vn`, '203.0.113.5'), 'invalid_credentials');
    expectError(await signIn(user.email, '203.0.113.5', user.password), 'rate_limited');
    // … and nowhere else behind the same proxy.
    expect((await signIn(user.email, '203.0.113.6', user.password)).status).toBe(200);
  });
});
