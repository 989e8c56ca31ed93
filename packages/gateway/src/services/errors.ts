/**
 * The one closed catalogue of errors the gateway answers with. Each `type` is a stable snake_case
 * identifier that callers branch on (never on `message`); the catalogue also feeds the OpenAPI
 * documents, docs/errors.md and the SDK. Adding a type is an API change: add it here, with its
 * status, meaning and what the caller should do.
 */

export interface ErrorTypeEntry {
  /** The HTTP status a whole request fails with (unused by a type that is only ever per recipient). */
  readonly status: number;
  /** What happened, for docs/errors.md and the OpenAPI documents. */
  readonly meaning: string;
  /** What the caller should do about it. */
  readonly action: string;
  /**
   * A per-recipient `error` prefix in batch and RSA results (`type: explanation`) as well as a
   * whole-request error ('also'), or only ever per recipient ('only').
   */
  readonly recipient?: 'also' | 'only';
}

export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    meaning:
      'The body, query or path does not match the schema (a missing or unknown field, a wrong type, a value out of range), or the HTTP request itself is malformed (a path that is not valid percent-encoded UTF-8, a bad request line or header, no Host header).',
    action: 'Fix the request as the message says; do not retry it unchanged.',
  },
  invalid_webhook_url: {
    status: 400,
    meaning:
      'Console: the webhook URL is not one the gateway posts to (not http or https, credentials in it, or a private, loopback, link-local or other non-public (reserved, documentation) address while TMS_WEBHOOK_ALLOW_PRIVATE is off). The operator API answers invalid_request for the same URLs.',
    action: "Use your receiver's public address, preferably https.",
  },
  invalid_json: {
    status: 400,
    meaning: 'The request body is not valid JSON.',
    action: 'Send a valid JSON document.',
  },
  invalid_tracking_id: {
    status: 400,
    meaning: '`tracking_id` is longer than 48 characters or has characters other than letters, digits, dot, hyphen and underscore.',
    action: 'Use at most 48 of `A-Z a-z 0-9 . _ -`, or leave it out to get the msg_id.',
  },
  invalid_send_at: {
    status: 400,
    meaning: '`send_at` is not an ISO 8601 date-time, or is more than 60 days ahead.',
    action: 'Send an ISO 8601 date-time at most 60 days ahead (without an offset it is read as Vietnam time).',
  },
  invalid_date_range: {
    status: 400,
    meaning: 'A `from`, `to` or other time filter is not an ISO 8601 date-time.',
    action: 'Send ISO 8601 date-times.',
  },
  invalid_template_data: {
    status: 400,
    meaning: "`template_data` does not satisfy the template's params: a required param is missing, a key is unknown, or a value is not a string within min_length..max_length.",
    action: 'Read the template\'s `params` from GET /api/v1/templates and send exactly those keys.',
    recipient: 'also',
  },
  missing_phone: {
    status: 400,
    meaning: 'The recipient has no phone number (empty once spaces, dots, dashes and parentheses are removed).',
    action: 'Send a phone number for every recipient.',
    recipient: 'also',
  },
  rsa_phone_invalid: {
    status: 400,
    meaning: '`rsa_phone` is missing, not standard base64, or not the length of an RSA ciphertext.',
    action: "Encrypt the number with the sender account's RSA public key (OAEP, SHA-256, MGF1 SHA-1) and send the standard base64 of the ciphertext.",
    recipient: 'only',
  },
  daily_quota_exceeded: {
    status: 400,
    meaning: "The sender account's daily quota for the day the message would be sent is used up (batch and RSA recipients only; a single send is never refused for it).",
    action: 'Check GET /api/v1/quota and send the rest after `reset_at`, or schedule it with `send_at`.',
    recipient: 'only',
  },
  invalid_idempotency_key: {
    status: 400,
    meaning: 'The Idempotency-Key header is empty, longer than 255 characters, or has characters outside printable ASCII.',
    action: 'Use 1 to 255 printable ASCII characters without spaces, for example a UUID.',
  },
  template_not_enabled: {
    status: 400,
    meaning: 'The template exists but its status is not ENABLE (PENDING_REVIEW, REJECT, DISABLE or DELETE).',
    action: 'Send only ENABLE templates; GET /api/v1/templates shows each status.',
  },
  sender_account_not_connected: {
    status: 400,
    meaning: "The template's sender account is disconnected from the gateway.",
    action: 'Ask your workspace owner or the operator to reconnect the sender account.',
  },
  unauthenticated: {
    status: 401,
    meaning: 'The API key (or operator token) is missing, wrong or revoked; in the console, there is no session or it has expired.',
    action: 'Send `Authorization: Bearer <key>` or `X-API-Key: <key>` with a live key; in the console, sign in again.',
  },
  invalid_credentials: {
    status: 401,
    meaning: 'Console sign-in: the e-mail address or the password is wrong (the message does not say which).',
    action: 'Check both and try again; after repeated failures sign-in is paused for a while (429).',
  },
  invalid_event_signature: {
    status: 401,
    meaning: 'A platform event arrived without a valid signature from the platform.',
    action: 'Only the platform calls this endpoint; nothing to do for integrators.',
  },
  insufficient_balance: {
    status: 402,
    meaning: 'The wallet holds less than the price of the whole request (a batch is refused whole).',
    action: 'Top up the wallet, or send fewer messages; nothing was queued or charged.',
  },
  account_cap_reached: {
    status: 402,
    meaning: "The workspace's account-level message cap, counted over its life, would be exceeded.",
    action: 'Ask the operator to raise the cap; nothing was queued or charged.',
  },
  forbidden_scope: {
    status: 403,
    meaning: 'The API key does not have the scope this endpoint needs.',
    action: 'Use a key with the scope named in the message (messages:send, messages:read or templates:read).',
  },
  csrf_failed: {
    status: 403,
    meaning: 'A console request that changes something came without the session\'s `X-CSRF-Token` header, with a wrong one, or from another origin.',
    action: 'Send the `csrf_token` of GET /console/api/session in `X-CSRF-Token` with every change.',
  },
  forbidden_role: {
    status: 403,
    meaning: "The console user's role (owner, developer, viewer) does not allow this.",
    action: 'Ask an owner of the workspace for a role that does.',
  },
  workspace_suspended: {
    status: 403,
    meaning: 'The workspace is suspended by the operator.',
    action: 'Contact the operator; no request of the workspace is served until it is reactivated.',
  },
  route_not_found: {
    status: 404,
    meaning: 'No endpoint has this method and path.',
    action: 'Check the method and the path against the API reference.',
  },
  message_not_found: {
    status: 404,
    meaning: "No message with this id in the key's workspace (a cancelled message is deleted and not found).",
    action: 'Check the msg_id; messages of another workspace are never visible.',
  },
  invitation_not_found: {
    status: 404,
    meaning: 'The console invitation link is unknown, already used or expired.',
    action: 'Ask whoever invited you (an owner or the operator) for a new invitation.',
  },
  console_user_not_found: {
    status: 404,
    meaning: 'No console user with this id in your workspace.',
    action: 'List the team to find the right id.',
  },
  template_not_found: {
    status: 404,
    meaning: "No template with this id in the key's workspace.",
    action: 'Use a template_id listed by GET /api/v1/templates.',
  },
  sender_account_not_found: {
    status: 404,
    meaning: 'No sender account with this oa_id in the workspace.',
    action: 'Use an oa_id listed by GET /api/v1/oas.',
  },
  workspace_not_found: {
    status: 404,
    meaning: 'No workspace with this id (operator API).',
    action: 'Check the workspace id with `tms admin workspaces list`.',
  },
  api_key_not_found: {
    status: 404,
    meaning: 'No API key with this id (operator API).',
    action: 'Check the key id with `tms admin keys list`.',
  },
  operator_token_not_found: {
    status: 404,
    meaning: 'No operator token with this id (operator API).',
    action: 'Check the token id with `tms admin operators list`.',
  },
  webhook_delivery_not_found: {
    status: 404,
    meaning: 'No delivery report with this id.',
    action: 'Check the delivery id; finished reports are purged after the retention period.',
  },
  request_timeout: {
    status: 408,
    meaning: "The request did not arrive in full within the server's request timeout, or within 5 s of the gateway beginning to stop; nothing of it was acted on.",
    action: 'Retry with the same Idempotency-Key; check the network path if it repeats.',
  },
  message_not_queued: {
    status: 409,
    meaning: 'The message is no longer queued (sending, sent, delivered or failed), so it cannot be cancelled.',
    action: 'Nothing to cancel: read the message to see its state.',
  },
  idempotency_key_in_flight: {
    status: 409,
    meaning: 'A request with the same Idempotency-Key is still being processed.',
    action: 'Retry the same request with the same key after a short wait; you will get its result.',
  },
  sender_account_taken: {
    status: 409,
    meaning: 'The sender account is connected to another workspace (operator API).',
    action: 'Disconnect it there first.',
  },
  sender_account_changed: {
    status: 409,
    meaning:
      'Operator API: another request changed the sender account (connected it, or connected and disconnected it again) while a reconnect was checking it with the platform, so the check no longer speaks for it. The reconnect changed nothing.',
    action: 'Read the account (GET /admin/v1/workspaces/{id}/sender-accounts) and reconnect it again if it should send.',
  },
  console_user_taken: {
    status: 409,
    meaning: 'A console user with this e-mail address exists already (an address belongs to one workspace).',
    action: 'Use another address, or ask the operator to move the person.',
  },
  last_owner: {
    status: 409,
    meaning: 'The change would leave the workspace without an owner.',
    action: 'Make someone else owner first.',
  },
  template_taken: {
    status: 409,
    meaning: 'The template belongs to another workspace (operator API).',
    action: 'Register it in the workspace that owns its sender account.',
  },
  webhook_delivery_pending: {
    status: 409,
    meaning: 'The delivery report is still pending: it will be attempted on its own.',
    action: 'Wait for its next attempt, or read its attempt log.',
  },
  master_key_rotation_incomplete: {
    status: 409,
    meaning:
      'Operator API: a master key rotation re-encrypted what it could, but stored secrets are still not under the current master key: ones the process cannot read under either of its keys (the message names each, and why), or ones that changed while it ran.',
    action: 'Keep TMS_MASTER_KEY_PREVIOUS. Run the rotation again; for unreadable secrets, give the process the key they name, or replace them (see the README, Rotating the master key).',
  },
  master_key_mismatch: {
    status: 409,
    meaning:
      'Operator API: a master key rotation named the key to rotate to (`master_key_id`), and the process that answered holds another as its current key (it has not been deployed, or restarted, with the new key: a rolling deployment behind a load balancer, say); the message names both ids. Nothing was re-encrypted.',
    action: 'Deploy the new key as TMS_MASTER_KEY to every process (embedded: restart `tms start`), then call again. Keep TMS_MASTER_KEY_PREVIOUS.',
  },
  webhook_delivery_not_redeliverable: {
    status: 409,
    meaning: 'The delivery report cannot be redelivered: its API key is revoked or has no webhook URL.',
    action: 'Set a webhook URL on a live key and redeliver again.',
  },
  payload_too_large: {
    status: 413,
    meaning: 'The request body is larger than 1 MiB.',
    action: 'Split the request (a batch takes at most 500 recipients).',
  },
  uri_too_long: {
    status: 414,
    meaning: 'A path parameter (an id) is longer than 100 characters.',
    action: 'Check the path; ids are short.',
  },
  unsupported_media_type: {
    status: 415,
    meaning: 'The request has a body that is not `application/json`.',
    action: 'Send `Content-Type: application/json` with a JSON body.',
  },
  expectation_failed: {
    status: 417,
    meaning: 'The request has an `Expect` header other than `100-continue`.',
    action: 'Leave the `Expect` header out, or send `Expect: 100-continue`.',
  },
  idempotency_key_reused: {
    status: 422,
    meaning: 'The Idempotency-Key was used in the last 24 hours with a different request.',
    action: 'Use a new key for a new request; reuse a key only to retry the very same request.',
  },
  sender_account_refused: {
    status: 422,
    meaning:
      "Operator API: the platform refused the sender account's credentials when the gateway checked them (a token refresh on connect, a quota call on reconnect); the message has the platform's code and reason. Connecting stored nothing; a reconnect whose stored refresh token was refused leaves the account needing a new one (relogin_required).",
    action: 'Check app_id and app_secret, authorise the app again for the OA to get a new refresh token, and connect again.',
  },
  template_refused: {
    status: 422,
    meaning:
      "Operator API: the platform's template info refused the template for this sender account (an unknown id, or another OA's); the message has the platform's code and reason. Nothing was stored.",
    action: 'Check the template id and which sender account owns it on the platform.',
  },
  rate_limited: {
    status: 429,
    meaning: "The API key's request rate limit is exceeded.",
    action: 'Wait the number of seconds in `Retry-After`, then retry.',
  },
  headers_too_large: {
    status: 431,
    meaning: 'The request line and headers together are larger than 16 KiB.',
    action: 'Send fewer or shorter headers, and a shorter path.',
  },
  internal_error: {
    status: 500,
    meaning: 'The gateway failed unexpectedly; the failure is logged with the request id.',
    action: 'Retry with the same Idempotency-Key; report the `X-Request-Id` if it persists.',
  },
  service_unavailable: {
    status: 503,
    meaning:
      'The gateway is shutting down or cannot reach its store; or (operator API) a backup was asked for while this process is taking another one (with `Retry-After`), or its download was abandoned before it was sent.',
    action: 'Retry with the same Idempotency-Key after a short wait (the seconds in `Retry-After` when given).',
  },
  platform_unavailable: {
    status: 503,
    meaning:
      'Operator API: a change the gateway checks with the platform first (connecting or reconnecting a sender account, registering a template) could not be checked: the platform did not answer, or answered "try again later". Nothing was stored.',
    action: 'Retry after a short wait. To set up where the platform cannot be reached, repeat with `?verify=false` (`--no-verify`).',
  },
  insufficient_disk_space: {
    status: 503,
    meaning:
      "Operator API: a backup was refused before it began because the file system it would be written to (for a download, the data directory's) has less free space than the database and its write-ahead log plus a margin (10 %, at least 64 MiB); the message has both sizes. Nothing was written.",
    action: 'Free space on that file system, then ask again; `tms admin backup FILE` can also write to another file system. Retrying unchanged will not help.',
  },
} as const satisfies Record<string, ErrorTypeEntry>;

export type ErrorType = keyof typeof ERROR_CATALOGUE;

export const ERROR_TYPES = Object.keys(ERROR_CATALOGUE) as ErrorType[];

/** A failure the caller should see: a catalogued type and a human sentence. */
export class ApiError extends Error {
  readonly statusCode: number;

  constructor(
    readonly type: ErrorType,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = ERROR_CATALOGUE[type].status;
  }
}

export const badRequest = (message: string): ApiError => new ApiError('invalid_request', message);

/** The types that appear as per-recipient errors in batch and RSA results. */
export type RecipientErrorType = {
  [Type in ErrorType]: (typeof ERROR_CATALOGUE)[Type] extends { recipient: 'also' | 'only' } ? Type : never;
}[ErrorType];

/** A per-recipient `error` string of batch and RSA results: the type, a colon, a space and the explanation. */
export const recipientError = (type: RecipientErrorType, explanation: string): string => `${type}: ${explanation}`;
