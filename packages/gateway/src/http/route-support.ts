import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { sha256Hex } from '../lib/crypto.ts';
import type { AdminDependencies } from '../services/admin.ts';
import type { ApiKeyAuthenticator } from '../services/authentication.ts';
import type { Dependencies, RequestContext } from '../services/context.ts';
import type { AccessTokens } from '../services/platform-tokens.ts';
import { ApiError } from '../services/errors.ts';
import type { IdempotencyInput, ServiceResponse } from '../services/idempotency.ts';
import type { RateLimiter } from './plugins/rate-limit.ts';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface RouteDependencies {
  deps: Dependencies;
  admin: AdminDependencies;
  authenticator: ApiKeyAuthenticator;
  limiter: RateLimiter;
  /** The process's access tokens (shared with the dispatcher); routes that need one make their own without it. */
  accessTokens?: AccessTokens;
}

export function contextOf(request: FastifyRequest, deps: Dependencies): RequestContext {
  if (!request.caller) throw new Error('route is missing its authentication guard');
  return { deps, caller: request.caller, requestId: request.id, log: request.log as unknown as Logger };
}

const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header (optional, up to 255 printable characters) and the request's fingerprint. */
export function idempotencyOf(request: FastifyRequest): IdempotencyInput | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new ApiError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces');
  }
  const path = request.url.split('?')[0];
  return { key, requestHash: sha256Hex(`${request.method} ${path}\n${JSON.stringify(request.body ?? null)}`) };
}

export function sendServiceResponse(reply: FastifyReply, response: ServiceResponse): FastifyReply {
  if (response.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(response.statusCode).send(response.body);
}
