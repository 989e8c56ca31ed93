/**
 * Console users for tests: invited by the operator's verb, their password set through the real
 * invitation endpoint, signed in through the real sign-in endpoint; requests then carry the
 * session cookie and (for changes) the CSRF token, as the console's pages do.
 */
import { randomBytes } from 'node:crypto';
import { inviteConsoleUser } from '../src/services/console/users.ts';
import type { ConsoleRole } from '../src/store/schema.ts';
import { httpRequest, type TestGateway, type TestResponse } from './harness.ts';

export interface ConsoleCredentials {
  userId: string;
  email: string;
  password: string;
}

export interface ConsoleRequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the session's CSRF token (default true). */
  csrf?: boolean;
}

export interface ConsoleSession {
  userId: string;
  email: string;
  role: ConsoleRole;
  workspaceId: string;
  /** `tms_console_session=…`, for a Cookie header. */
  cookie: string;
  csrfToken: string;
  request(method: string, path: string, options?: ConsoleRequestOptions): Promise<TestResponse>;
}

let userCounter = 0;

/** The invitation token at the end of an invitation link. */
export function invitationTokenOf(invitationUrl: string): string {
  return invitationUrl.slice(invitationUrl.lastIndexOf('/') + 1);
}

/** A console user of the workspace with a password set. */
export async function createConsoleUser(gateway: TestGateway, workspaceId: string, role: ConsoleRole): Promise<ConsoleCredentials> {
  userCounter += 1;
  const email = `${role}.${process.pid}.${userCounter}.${randomBytes(3).toString('hex')}@example.vn`;
  const password = `pass-${randomBytes(9).toString('base64url')}`;
  const invitation = await inviteConsoleUser({
    ctx: gateway.runtime.contextFor({ kind: 'operator' }),
    input: { workspaceId, email, role, origin: gateway.url },
  });
  const accepted = await httpRequest(gateway.url, 'POST', `/console/api/invitations/${invitationTokenOf(invitation.invitationUrl)}/accept`, { body: { password } });
  if (accepted.status !== 200) throw new Error(`accepting the invitation failed: ${accepted.status} ${accepted.text}`);
  return { userId: invitation.user.id, email, password };
}

/** The session cookie a response set, as a Cookie header value. */
export function sessionCookieOf(response: TestResponse): string {
  const header = response.headers.get('set-cookie') ?? '';
  const cookie = header.split(';')[0] ?? '';
  if (!cookie.startsWith('tms_console_session=')) throw new Error(`no session cookie in ${response.status} ${response.text}`);
  return cookie;
}

export async function signInConsole(gateway: TestGateway, email: string, password: string): Promise<ConsoleSession> {
  const response = await httpRequest(gateway.url, 'POST', '/console/api/session', { body: { email, password } });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${response.text}`);
  const cookie = sessionCookieOf(response);
  const csrfToken: string = response.body.csrf_token;
  return {
    userId: response.body.user.id,
    email,
    role: response.body.user.role,
    workspaceId: response.body.workspace.id,
    cookie,
    csrfToken,
    request: (method, path, options = {}) =>
      httpRequest(gateway.url, method, path, {
        body: options.body,
        headers: { cookie, ...(options.csrf === false ? {} : { 'x-csrf-token': csrfToken }), ...options.headers },
      }),
  };
}

/** A new console user of the workspace, signed in. */
export async function consoleUserIn(gateway: TestGateway, workspaceId: string, role: ConsoleRole): Promise<ConsoleSession> {
  const user = await createConsoleUser(gateway, workspaceId, role);
  return signInConsole(gateway, user.email, user.password);
}
