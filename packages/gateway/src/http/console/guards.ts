import type { FastifyRequest } from 'fastify';
import { authenticateConsoleSession, csrfTokenMatches, type AuthenticatedSession } from '../../services/console/sessions.ts';
import { roleAllows } from '../../services/console/users.ts';
import { ApiError } from '../../services/errors.ts';
import type { ConsoleRole } from '../../services/vocabulary.ts';
import { requestLog, requestOrigin, type RouteDependencies } from '../route-support.ts';
import { SESSION_COOKIE, cookieOf } from './cookies.ts';

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession?: AuthenticatedSession;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** This service's own origin, as the browser names it in `Origin`. */
function ownOrigin(route: RouteDependencies, request: FastifyRequest): string {
  const publicUrl = route.config.console.publicUrl;
  return publicUrl ? new URL(publicUrl).origin : requestOrigin(request);
}

/**
 * A change must come from the console's own pages: a browser names the page's origin in `Origin`
 * (and `Sec-Fetch-Site`) on every cross-origin POST, so another site's form or script is refused
 * here, before a session is even looked at. Sign-in has no session yet, so this is its CSRF defence.
 */
export function requireSameOrigin(route: RouteDependencies) {
  return async (request: FastifyRequest): Promise<void> => {
    if (READ_METHODS.has(request.method)) return;
    const origin = request.headers.origin;
    const site = request.headers['sec-fetch-site'];
    if ((typeof origin === 'string' && origin !== ownOrigin(route, request)) || site === 'cross-site' || site === 'same-site') {
      throw new ApiError('csrf_failed', 'console changes must come from the console itself');
    }
  };
}

/**
 * Every /console/api route's onRequest hook: a live session cookie (401), for a change the
 * session's CSRF token in `X-CSRF-Token` and the same origin (403), and at least `minimum` role (403).
 */
export function requireConsoleRole(route: RouteDependencies, minimum: ConsoleRole) {
  const sameOrigin = requireSameOrigin(route);
  return async (request: FastifyRequest): Promise<void> => {
    await sameOrigin(request);
    const ctx = route.contextFor({ kind: 'anonymous' }, requestLog(request));
    const session = await authenticateConsoleSession({ ctx, input: { token: cookieOf(request, SESSION_COOKIE) } });
    if (!READ_METHODS.has(request.method)) {
      const presented = request.headers['x-csrf-token'];
      if (!csrfTokenMatches(session, typeof presented === 'string' ? presented : undefined)) {
        throw new ApiError('csrf_failed', 'missing or wrong X-CSRF-Token header; reload the console');
      }
    }
    if (!roleAllows(session.caller.role, minimum)) {
      throw new ApiError('forbidden_role', `this needs the ${minimum} role or higher; you are ${session.caller.role}`);
    }
    request.consoleSession = session;
  };
}
