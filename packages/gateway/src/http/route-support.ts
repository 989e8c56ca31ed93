import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { ApiKeyCaller, Caller, ConsoleUserCaller, Context, OperatorCaller } from '../services/context.ts';
import { ApiError } from '../services/errors.ts';
import type { IdempotencyInput } from '../services/idempotency.ts';
import type { RateLimiter } from './plugins/rate-limit.ts';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What routes are given: a way to make a verb's context, never the store or the parts themselves. */
export interface RouteDependencies {
  readonly config: Config;
  readonly limiter: RateLimiter;
  contextFor<C extends Caller>(caller: C, log: Logger): Context<C>;
}

const OPERATOR: OperatorCaller = { kind: 'operator' };

/** The context of a request whose API key the route's guard has authenticated. */
export function apiContextOf(request: FastifyRequest, route: RouteDependencies): Context<ApiKeyCaller> {
  if (!request.caller) throw new Error('route is missing its authentication guard');
  return route.contextFor(request.caller, requestLog(request));
}

/** The context of a /console/api request whose session the route's guard (requireConsoleRole) checked. */
export function consoleContextOf(request: FastifyRequest, route: RouteDependencies): Context<ConsoleUserCaller> {
  if (!request.consoleSession) throw new Error('route is missing its console guard');
  return route.contextFor(request.consoleSession.caller, requestLog(request));
}

/** The context of an /admin/v1 request (its guard checked the operator token). */
export function operatorContextOf(request: FastifyRequest, route: RouteDependencies): Context<OperatorCaller> {
  return route.contextFor(request.operator ?? OPERATOR, requestLog(request));
}

/** Where this request reached the service (scheme and host), e.g. for links when TMS_PUBLIC_URL is unset. */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? 'localhost'}`;
}

export function requestLog(request: FastifyRequest): Logger {
  return request.log as unknown as Logger;
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

/** A POST's answer: the stored one replayed under its Idempotency-Key is marked so. */
export function sendIdempotent<Body>(reply: FastifyReply, statusCode: number, outcome: { replayed: boolean }, body: Body): FastifyReply {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(statusCode).send(body);
}
