import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateApiKey, type AuthenticatedKey, type Scope } from '../../services/authentication.ts';
import type { OperatorCaller } from '../../services/context.ts';
import { ApiError } from '../../services/errors.ts';
import { authenticateOperator } from '../../services/operator-tokens.ts';
import { requestLog, type RouteDependencies } from '../route-support.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: AuthenticatedKey;
    /** The operator behind an /admin/v1 (or /metrics) request. */
    operator?: OperatorCaller;
  }
}

function presentedApiKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '').trim();
  const header = request.headers['x-api-key'];
  return typeof header === 'string' && header !== '' ? header.trim() : undefined;
}

/**
 * Authenticates the API key, checks the scope and the key's rate limit (in that order). Routes use
 * it as their onRequest hook, before the body is read and validated: a caller without a good key
 * learns nothing about its request, and invalid requests count against the rate limit too.
 */
export function requireScope(route: RouteDependencies, scope: Scope) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const ctx = route.contextFor({ kind: 'anonymous' }, requestLog(request));
    const caller = await authenticateApiKey({ ctx, input: { presentedKey: presentedApiKey(request), scope } });
    const limit = route.limiter.take(caller.apiKeyId, caller.rateLimitPerSecond);
    reply.header('x-ratelimit-limit', String(limit.limit));
    reply.header('x-ratelimit-remaining', String(limit.remaining));
    if (limit.retryAfterSeconds > 0) {
      throw new ApiError('rate_limited', `rate limit of ${limit.limit} requests per second exceeded`, { 'retry-after': String(limit.retryAfterSeconds) });
    }
    request.caller = caller;
  };
}

/** An onRequest hook like requireScope, or the operator's own: the guard of what only operators see. */
export type RequestGuard = (request: FastifyRequest) => Promise<void>;

/**
 * The operator API, /metrics and the operator reference: Authorization: Bearer with a named
 * operator token or TMS_ADMIN_TOKEN (the bootstrap token, compared in constant time). Who it is
 * goes with the request, for the audit log.
 */
export function requireOperator(route: RouteDependencies): RequestGuard {
  const bootstrapToken = route.config.adminToken;
  if (!bootstrapToken) throw new Error('the operator API needs an admin token');
  return async (request: FastifyRequest): Promise<void> => {
    const authorization = request.headers.authorization ?? '';
    const token = /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, '').trim() : '';
    const operator = await authenticateOperator(route.contextFor({ kind: 'anonymous' }, requestLog(request)), token, bootstrapToken);
    if (!operator) throw new ApiError('unauthenticated', 'missing or wrong operator token');
    request.operator = operator;
  };
}
