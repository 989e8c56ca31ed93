/** The security schemes, parameters and headers the documents refer to by `$ref`. */
import type { HeaderObject, ParameterObject, Reference, SecuritySchemeObject } from './document-types.ts';

export type Audience = 'public' | 'operator' | 'console';

export const SECURITY_SCHEMES: Record<Audience, Record<string, SecuritySchemeObject>> = {
  public: {
    apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'The API key: `Authorization: Bearer tms_live_…`' },
    apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The API key in its own header, instead of Authorization' },
  },
  operator: {
    operatorToken: { type: 'http', scheme: 'bearer', description: 'The operator token (`TMS_ADMIN_TOKEN`): `Authorization: Bearer <token>`' },
  },
  console: {
    consoleSession: {
      type: 'apiKey',
      in: 'cookie',
      name: 'tms_console_session',
      description: 'The session cookie set by signing in (HttpOnly, SameSite=Strict); every change also needs the `X-CSRF-Token` header',
    },
  },
};

/** Every security scheme a route may name; @fastify/swagger needs them all to generate the full document. */
export const ALL_SECURITY_SCHEMES: Record<string, SecuritySchemeObject> = { ...SECURITY_SCHEMES.public, ...SECURITY_SCHEMES.operator, ...SECURITY_SCHEMES.console };

export const SECURITY: Record<Audience, Record<string, string[]>[]> = {
  public: [{ apiKeyBearer: [] }, { apiKeyHeader: [] }],
  operator: [{ operatorToken: [] }],
  console: [{ consoleSession: [] }],
};

export const PARAMETERS: Record<string, ParameterObject> = {
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Your id for this request (1 to 128 of `A-Z a-z 0-9 . _ : -`), echoed in the X-Request-Id response header and our logs; another value is replaced by ours.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
    example: 'hoasen-checkout-7f3a2c',
  },
  CsrfToken: {
    name: 'X-CSRF-Token',
    in: 'header',
    required: true,
    description: 'The `csrf_token` of the session (GET /console/api/session): required on every change, else 403 `csrf_failed`.',
    schema: { type: 'string' },
    example: 'mT3k9Qx0b1V7yZ2aC4dE6fG8hJ0kL2mN4pQ6rS8tU0w',
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Makes a retry safe: the same key and body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and creates nothing; another body is 422, a request still in flight 409. 1 to 255 printable ASCII characters without spaces, for example a UUID.',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
    example: '3f0c9a52-8d41-4b7e-9c1a-6e2d5b8f7a10',
  },
};

export const HEADERS: Record<string, HeaderObject> = {
  RequestId: { description: "The request's id: yours when you sent a safe X-Request-Id, else ours. Quote it when reporting a problem.", schema: { type: 'string' }, example: 'req_Zk3T9qL1vA2b4' },
  IdempotentReplayed: { description: 'Present, `true`, when this is the stored first response to the same Idempotency-Key and body.', schema: { type: 'string', enum: ['true'] }, example: 'true' },
  RateLimitLimit: { description: "The key's rate limit, requests per second.", schema: { type: 'integer' }, example: 50 },
  RateLimitRemaining: { description: 'Requests left in the current burst.', schema: { type: 'integer' }, example: 99 },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 }, example: 1 },
};

export const parameterRef = (name: keyof typeof PARAMETERS): Reference => ({ $ref: `#/components/parameters/${name}` });
export const headerRef = (name: keyof typeof HEADERS): Reference => ({ $ref: `#/components/headers/${name}` });
