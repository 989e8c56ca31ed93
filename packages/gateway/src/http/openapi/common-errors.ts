/** Error types that whole families of routes share, for their `x-error-types`. */
import type { ErrorType } from '../../services/errors.ts';

/** The gateway's own failures, possible on any route: a bug, or a shutdown or store outage. */
export const GATEWAY_FAILURES = ['internal_error', 'service_unavailable'] as const satisfies readonly ErrorType[];

/** Every /api/v1 route: the key's authentication, scope, workspace and rate limit (guards.ts). */
export const API_KEY_ERRORS = ['unauthenticated', 'forbidden_scope', 'workspace_suspended', 'rate_limited', ...GATEWAY_FAILURES] as const satisfies readonly ErrorType[];

/** Every route that takes a JSON body (json-body.ts and the body limit). */
export const JSON_BODY_ERRORS = ['invalid_request', 'invalid_json', 'payload_too_large', 'unsupported_media_type'] as const satisfies readonly ErrorType[];

/** Every /api/v1 POST: the Idempotency-Key header (route-support.ts, idempotency.ts). */
export const IDEMPOTENCY_ERRORS = ['invalid_idempotency_key', 'idempotency_key_in_flight', 'idempotency_key_reused'] as const satisfies readonly ErrorType[];

/** Routes with a path parameter: one over 100 characters is refused (protocol-errors.ts). */
export const PATH_PARAMETER_ERRORS = ['uri_too_long'] as const satisfies readonly ErrorType[];

/** Every operator route: the operator token. */
export const OPERATOR_ERRORS = ['unauthenticated', ...GATEWAY_FAILURES] as const satisfies readonly ErrorType[];

/** Every way the shared acceptance path refuses a send whole, whoever sends (an API key or the console). */
export const ACCEPTANCE_PATH_ERRORS = [
  ...JSON_BODY_ERRORS,
  'invalid_tracking_id',
  'invalid_send_at',
  'template_not_enabled',
  'sender_account_not_connected',
  'insufficient_balance',
  'account_cap_reached',
  'template_not_found',
  ...IDEMPOTENCY_ERRORS,
] as const satisfies readonly ErrorType[];

/** Every way a send, batch or RSA request can be refused whole: the acceptance path and the key. */
export const ACCEPTANCE_ERRORS = [...ACCEPTANCE_PATH_ERRORS, ...API_KEY_ERRORS] as const satisfies readonly ErrorType[];
