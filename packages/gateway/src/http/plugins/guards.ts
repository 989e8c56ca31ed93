import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.ts';
import { authenticateApiKey, type AuthenticatedKey, type Scope } from '../../services/authentication.ts';
import { ApiError } from '../../services/errors.ts';
import { requestLog, type RouteDependencies } from '../route-support.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: AuthenticatedKey;
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

/** The operator API: Authorization: Bearer <TMS_ADMIN_TOKEN>, compared in constant time; an onRequest hook like requireScope. */
export function requireAdmin(adminToken: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const authorization = request.headers.authorization ?? '';
    const token = /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, '').trim() : '';
    if (!token || !safeEqual(token, adminToken)) throw new ApiError('unauthenticated', 'missing or wrong operator token');
  };
}
