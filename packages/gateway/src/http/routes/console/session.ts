import { Type } from 'typebox';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../lib/passwords.ts';
import { signIn, signOut, signOutEverywhere, startConsoleSession } from '../../../services/console/sessions.ts';
import { acceptInvitation, readInvitation } from '../../../services/console/users.ts';
import { formatUtc } from '../../../lib/vietnam-time.ts';
import { SESSION_COOKIE, clearSessionCookie, cookieOf, setSessionCookie } from '../../console/cookies.ts';
import { requireConsoleRole, requireSameOrigin } from '../../console/guards.ts';
import { presentSession } from '../../presenters/console-session.ts';
import { consoleContextOf, requestLog, type App, type RouteDependencies } from '../../route-support.ts';
import { DateTime } from '../../schemas.ts';
import { ConsoleRoleSchema, SessionView } from './session-schemas.ts';

const SignInBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }) },
  { additionalProperties: false },
);
const InvitationParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
const AcceptBody = Type.Object({ password: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH }) }, { additionalProperties: false });
const InvitationView = Type.Object({ email: Type.String(), role: ConsoleRoleSchema, workspace: Type.Object({ id: Type.String(), name: Type.String() }), expires_at: DateTime });

/** Sign-in, the current session, sign-out, and accepting an invitation. */
export function registerConsoleSession(app: App, route: RouteDependencies): void {
  const anonymous = (request: Parameters<typeof requestLog>[0]) => route.contextFor({ kind: 'anonymous' }, requestLog(request));

  app.post(
    '/console/api/session',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleSignIn',
        summary: 'Sign in with e-mail address and password',
        body: SignInBody,
        response: { 200: SessionView },
        'x-error-types': ['invalid_credentials', 'rate_limited', 'csrf_failed', 'invalid_request'],
      },
      onRequest: requireSameOrigin(route),
    },
    async (request, reply) => {
      const ctx = anonymous(request);
      const session = await signIn({ ctx, input: { email: request.body.email, password: request.body.password, address: request.ip } });
      setSessionCookie(reply, route.config, session.token, session.expiresAt, ctx.clock());
      return presentSession(session);
    },
  );

  app.get(
    '/console/api/session',
    {
      schema: { tags: ['Console'], operationId: 'consoleGetSession', summary: 'The signed-in user, workspace and CSRF token', response: { 200: SessionView }, 'x-error-types': ['unauthenticated'] },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentSession(request.consoleSession!),
  );

  app.delete(
    '/console/api/session',
    {
      schema: { tags: ['Console'], operationId: 'consoleSignOut', summary: 'Sign out', response: { 204: Type.Null() }, 'x-error-types': ['unauthenticated', 'csrf_failed'] },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request, reply) => {
      await signOut({ ctx: anonymous(request), input: { token: cookieOf(request, SESSION_COOKIE)! } });
      clearSessionCookie(reply, route.config);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/console/api/session/sign-out-everywhere',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleSignOutEverywhere',
        summary: 'End every session of the signed-in user, on every device',
        response: { 204: Type.Null() },
        'x-error-types': ['unauthenticated', 'csrf_failed'],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request, reply) => {
      await signOutEverywhere({ ctx: consoleContextOf(request, route), input: {} });
      clearSessionCookie(reply, route.config);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/console/api/invitations/:token',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleGetInvitation',
        summary: 'Who an invitation link is for',
        params: InvitationParams,
        response: { 200: InvitationView },
        'x-error-types': ['invitation_not_found'],
      },
    },
    async (request) => {
      const user = await readInvitation({ ctx: anonymous(request), input: { token: request.params.token } });
      return { email: user.email, role: user.role, workspace: { id: user.workspace_id, name: user.workspace_name }, expires_at: formatUtc(user.invitation_expires_at!) };
    },
  );

  app.post(
    '/console/api/invitations/:token/accept',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleAcceptInvitation',
        summary: 'Set a password with an invitation link, and sign in',
        params: InvitationParams,
        body: AcceptBody,
        response: { 200: SessionView },
        'x-error-types': ['invitation_not_found', 'csrf_failed', 'invalid_request'],
      },
      onRequest: requireSameOrigin(route),
    },
    async (request, reply) => {
      const ctx = anonymous(request);
      const user = await acceptInvitation({ ctx, input: { token: request.params.token, password: request.body.password } });
      const session = await startConsoleSession(ctx, user);
      setSessionCookie(reply, route.config, session.token, session.expiresAt, ctx.clock());
      return presentSession(session);
    },
  );
}

