/**
 * The one error class of the SDK. Every failed call rejects with a TmsError, whether the service
 * answered with an error body or no answer came at all (network, timeout), so callers handle one
 * class and switch on `type` (the service's catalogued error type) or on `kind`.
 */

/**
 * The service's error types (its closed error catalogue, docs/errors.md): the `error.type` of every
 * error body. Branch on these, never on `message`, whose wording may change.
 */
export const TMS_ERROR_TYPES = [
  'invalid_request',
  'invalid_webhook_url',
  'invalid_json',
  'invalid_tracking_id',
  'invalid_send_at',
  'invalid_date_range',
  'invalid_template_data',
  'missing_phone',
  'rsa_phone_invalid',
  'daily_quota_exceeded',
  'invalid_idempotency_key',
  'template_not_enabled',
  'sender_account_not_connected',
  'unauthenticated',
  'invalid_credentials',
  'invalid_event_signature',
  'insufficient_balance',
  'account_cap_reached',
  'forbidden_scope',
  'csrf_failed',
  'forbidden_role',
  'workspace_suspended',
  'route_not_found',
  'message_not_found',
  'invitation_not_found',
  'console_user_not_found',
  'template_not_found',
  'sender_account_not_found',
  'workspace_not_found',
  'api_key_not_found',
  'operator_token_not_found',
  'webhook_delivery_not_found',
  'request_timeout',
  'message_not_queued',
  'idempotency_key_in_flight',
  'sender_account_taken',
  'sender_account_changed',
  'console_user_taken',
  'last_owner',
  'template_taken',
  'webhook_delivery_pending',
  'master_key_rotation_incomplete',
  'master_key_mismatch',
  'webhook_delivery_not_redeliverable',
  'payload_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'expectation_failed',
  'idempotency_key_reused',
  'sender_account_refused',
  'template_refused',
  'rate_limited',
  'headers_too_large',
  'internal_error',
  'service_unavailable',
  'platform_unavailable',
  'insufficient_disk_space',
] as const;

export type TmsErrorType = (typeof TMS_ERROR_TYPES)[number];

/** What went wrong, as a name to switch on. `status` carries the HTTP status when there was one. */
export type TmsErrorKind =
  | 'bad_request' // 400: malformed body, missing field, invalid tracking_id, template not ENABLE
  | 'unauthorized' // 401: missing, wrong or revoked key
  | 'payment_required' // 402: wallet too low or account-level cap reached (the message says which)
  | 'forbidden' // 403: key lacks the scope, or the workspace is suspended
  | 'not_found' // 404: not in the key's workspace (or cancelled)
  | 'conflict' // 409: cancel of a message that is not queued, or an Idempotency-Key still in flight
  | 'payload_too_large' // 413
  | 'unsupported_media_type' // 415
  | 'idempotency_mismatch' // 422: Idempotency-Key reused with a different body
  | 'rate_limited' // 429: see retryAfter
  | 'server_error' // 5xx
  | 'http_error' // any other status
  | 'network' // no response: connection refused, reset, DNS …
  | 'timeout' // no response within the call's timeout
  | 'invalid_response'; // a 2xx whose body is not the JSON the contract promises

const KIND_BY_STATUS: Record<number, TmsErrorKind> = {
  400: 'bad_request',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'idempotency_mismatch',
  429: 'rate_limited',
};

export function kindOfStatus(status: number): TmsErrorKind {
  return KIND_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'http_error');
}

export interface TmsErrorDetails {
  kind: TmsErrorKind;
  /** `error.type` of the body; null when there was no error body. */
  type?: TmsErrorType | null;
  message: string;
  /** HTTP status; 0 when no response arrived. */
  status?: number;
  /** `error.code` of the body; equals the HTTP status per the contract; 0 when no body. */
  code?: number;
  requestId?: string | null;
  retryAfter?: number | null;
  idempotencyKey?: string | null;
  method?: string;
  path?: string;
  attempts?: number;
  cause?: unknown;
}

export class TmsError extends Error {
  override readonly name = 'TmsError';
  readonly kind: TmsErrorKind;
  /**
   * The service's catalogued error type (`error.type` of the body), e.g. 'insufficient_balance'
   * or 'account_cap_reached' for a 402; null when no error body arrived (network, timeout, a body
   * that is not the contract's). A newer service may send a type this SDK does not list yet, so
   * give a `switch` on it a default branch.
   */
  readonly type: TmsErrorType | null;
  /** HTTP status of the last attempt; 0 when no response arrived (network, timeout). */
  readonly status: number;
  /** `error.code` from the error body (equals the HTTP status); 0 when there was no error body. */
  readonly code: number;
  /** X-Request-Id of the failing response (or the one this SDK sent), for support and logs. */
  readonly requestId: string | null;
  /** Seconds the service asked to wait (Retry-After), when it did. */
  readonly retryAfter: number | null;
  /**
   * The Idempotency-Key the call used (POST only). Retrying the same request with this key later
   * cannot create or charge anything twice, even when this error left the outcome unknown.
   */
  readonly idempotencyKey: string | null;
  readonly method: string;
  readonly path: string;
  /** How many HTTP attempts were made, retries included. */
  readonly attempts: number;

  constructor(details: TmsErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = details.kind;
    this.type = details.type ?? null;
    this.status = details.status ?? 0;
    this.code = details.code ?? 0;
    this.requestId = details.requestId ?? null;
    this.retryAfter = details.retryAfter ?? null;
    this.idempotencyKey = details.idempotencyKey ?? null;
    this.method = details.method ?? '';
    this.path = details.path ?? '';
    this.attempts = details.attempts ?? 1;
  }

  /**
   * True when a POST may have taken effect although no readable success answer arrived (network
   * error, timeout, 5xx, or a 2xx whose body could not be read). Send it again with
   * `idempotencyKey` to settle it without a duplicate.
   */
  get outcomeUnknown(): boolean {
    return this.method === 'POST' && (this.status === 0 || this.status >= 500 || this.kind === 'invalid_response');
  }
}

export function isTmsError(value: unknown): value is TmsError {
  return value instanceof TmsError;
}
