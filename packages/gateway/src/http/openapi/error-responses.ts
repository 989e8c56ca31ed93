/** The documented error responses: the envelope, what each type means, and an example per type. */
import { ERROR_CATALOGUE, type ErrorType } from '../../services/errors.ts';
import type { NamedExamples } from './route-docs.ts';

/**
 * The message each type is answered with, worded as the gateway words it, with the reference's
 * example data. A type missing here (a new one) is shown with its catalogue meaning instead.
 */
const EXAMPLE_MESSAGES: Partial<Record<ErrorType, string>> = {
  invalid_request: 'body must have required property \'phone\'',
  invalid_json: 'request body is not valid JSON',
  invalid_tracking_id: 'body.tracking_id must be at most 48 characters of letters, digits, dot, hyphen or underscore',
  invalid_send_at: 'send_at is more than 60 days in the future',
  invalid_date_range: 'from "24/11/2026" is not an ISO 8601 date-time',
  invalid_template_data: 'template_data: missing required parameter "order_code"',
  missing_phone: 'phone must contain a number',
  rsa_phone_invalid: 'rsa_phone must be standard base64',
  daily_quota_exceeded: 'sender account 4318269720189301001 has no daily quota left for 2026-11-24 (daily quota 5000)',
  invalid_idempotency_key: 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
  template_not_enabled: 'template 250001 is PENDING_REVIEW; only ENABLE templates can be sent',
  sender_account_not_connected: 'sender account 4318269720189301001 of template 250001 is not connected',
  unauthenticated: 'invalid or revoked API key',
  invalid_event_signature: 'X-ZEvent-Signature does not match the event',
  insufficient_balance: 'insufficient wallet balance: 66000 VND needed, 45000 VND available',
  account_cap_reached: 'account message cap reached: 9990 of 10000 messages used, 200 more requested',
  forbidden_scope: 'API key lacks the messages:send scope',
  workspace_suspended: 'workspace is suspended',
  route_not_found: 'no route GET /api/v1/message',
  message_not_found: 'message msg_01KAT3M5Q8ZJ7Y4V2N6R9C1D0E not found',
  template_not_found: 'template 250009 not found',
  sender_account_not_found: 'sender account 4318269720189301009 not found',
  workspace_not_found: 'workspace ws_01KAT2Z7X4C8V6B2N1M3Q5R7T9 not found',
  api_key_not_found: 'API key key_01KAT30A1B2C3D4E5F6G7H8J9K not found',
  webhook_delivery_not_found: 'webhook delivery dlv_01KAT3P2W6S8D0F2G4H6J8K0M2 not found',
  message_not_queued: 'message msg_01KAT3M5Q8ZJ7Y4V2N6R9C1D0E is sent; only queued messages can be cancelled',
  idempotency_key_in_flight: 'a request with this Idempotency-Key is still in progress; retry it later',
  sender_account_taken: 'sender account 4318269720189301001 is connected to another workspace',
  template_taken: 'template 250001 belongs to another workspace',
  webhook_delivery_pending: 'webhook delivery dlv_01KAT3P2W6S8D0F2G4H6J8K0M2 is pending already',
  webhook_delivery_not_redeliverable: 'webhook delivery dlv_01KAT3P2W6S8D0F2G4H6J8K0M2 cannot be redelivered: the API key has no webhook URL',
  payload_too_large: 'request body is larger than 1 MiB',
  uri_too_long: 'a path parameter is longer than 100 characters',
  unsupported_media_type: 'request body must be JSON (Content-Type: application/json)',
  idempotency_key_reused: 'Idempotency-Key was already used with a different request; use a new key for a new request',
  rate_limited: 'rate limit of 50 requests per second exceeded',
  headers_too_large: 'the request headers are too large',
  internal_error: 'internal error',
  service_unavailable: 'store not reachable',
};

export const errorStatusOf = (type: ErrorType): number => ERROR_CATALOGUE[type].status;

/** The body the gateway answers `type` with, as in the reference's examples. */
export function exampleErrorBody(type: ErrorType, message?: string): { error: { code: number; type: ErrorType; message: string } } {
  const entry = ERROR_CATALOGUE[type];
  return { error: { code: entry.status, type, message: message ?? EXAMPLE_MESSAGES[type] ?? entry.meaning } };
}

/** The types of `types` by status, in the order given. */
export function groupByStatus(types: readonly ErrorType[]): Map<number, ErrorType[]> {
  const groups = new Map<number, ErrorType[]>();
  for (const type of types) {
    const status = errorStatusOf(type);
    const group = groups.get(status) ?? [];
    if (!group.includes(type)) group.push(type);
    groups.set(status, group);
  }
  return new Map([...groups].sort(([a], [b]) => a - b));
}

/** The description of one error status of an operation: each type, what it means and what to do. */
export function describeErrorTypes(types: readonly ErrorType[]): string {
  return types.map((type) => `\`${type}\`: ${ERROR_CATALOGUE[type].meaning} ${ERROR_CATALOGUE[type].action}`).join('\n\n');
}

/** One example per type, named after it, explained with its meaning and what to do. */
export function errorExamples(types: readonly ErrorType[], messages: Partial<Record<ErrorType, string>> = {}): NamedExamples {
  return Object.fromEntries(
    types.map((type) => [type, { summary: type, description: describeErrorTypes([type]), value: exampleErrorBody(type, messages[type]) }]),
  );
}
