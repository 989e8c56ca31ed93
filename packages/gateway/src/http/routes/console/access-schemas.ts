/**
 * Wire shapes of the console's API keys, webhook deliveries, team and activity (the console API
 * contract), shared by their routes, presenters and the operator's user routes.
 */
import { Type } from 'typebox';
import type { ErrorType } from '../../../services/errors.ts';
import { GATEWAY_FAILURES } from '../../openapi/common-errors.ts';
import { MAX_ACTIVITY_PAGE_SIZE, MAX_INT32 } from '../../../lib/limits.ts';
import { DateTime, Nullable } from '../../schemas.ts';
import { ConsoleRoleSchema } from './session-schemas.ts';
import { WebhookDeliverySchema, WebhookDeliveryStatusSchema } from '../admin/admin-schemas.ts';

/** Every console route: the session and the role (guards.ts). */
export const CONSOLE_READ_ERRORS = ['unauthenticated', 'forbidden_role', ...GATEWAY_FAILURES] as const satisfies readonly ErrorType[];
/** Every console change: the session, the role and the CSRF token. */
export const CONSOLE_CHANGE_ERRORS = ['unauthenticated', 'csrf_failed', 'forbidden_role', ...GATEWAY_FAILURES] as const satisfies readonly ErrorType[];

export const ConsoleScopeSchema = Type.Union([Type.Literal('messages:send'), Type.Literal('messages:read'), Type.Literal('templates:read')]);

export const ConsoleApiKeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key_prefix: Type.String({ description: 'The start of the key, to recognise it; the key itself is shown once, when created' }),
  scopes: Type.Array(Type.String()),
  webhook_url: Nullable(Type.String({ description: 'Where delivery reports of messages sent with this key go' })),
  created_at: DateTime,
  revoked_at: Nullable(DateTime),
  last_used_at: Nullable(DateTime),
});

export const WebhookUrlSchema = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http(s) URL of a public address (no private, loopback, link-local or other non-public target, no credentials in it)',
});

export const TestReportSchema = Type.Object({
  url: Type.String(),
  status_code: Nullable(Type.Integer({ description: 'Null when no answer came' })),
  latency_ms: Type.Integer(),
  response_body: Type.String({ description: "The start of the receiver's answer, at most 2 KB" }),
  error: Nullable(Type.String({ description: 'Timeout, connection error, refused target, or the start of a non-2xx answer' })),
  request_body: Type.String({ description: 'The exact body posted (and signed)' }),
});

export const ConsoleDeliveryStatusSchema = WebhookDeliveryStatusSchema;

/** The operator's delivery record without the workspace, which is the signed-in one's. */
export const ConsoleDeliverySchema = Type.Omit(WebhookDeliverySchema, ['workspace_id']);

export const ConsoleAttemptSchema = Type.Object({
  attempt: Type.Integer(),
  started_at: DateTime,
  url: Type.String(),
  status_code: Nullable(Type.Integer()),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String()),
  outcome: Type.String({ description: 'delivered, retry, failed, or released (cut short by a stopping worker; not counted)' }),
});

export const ConsoleDeliveryDetailSchema = Type.Intersect([
  ConsoleDeliverySchema,
  Type.Object({
    body: Type.String({ description: 'The exact JSON text sent (and signed) on every attempt' }),
    headers: Type.Record(Type.String(), Type.String(), { description: 'The headers every attempt sends (X-Gateway-Attempt aside), the signature included' }),
    attempt_log: Type.Array(ConsoleAttemptSchema),
  }),
]);

export const TeamUserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: ConsoleRoleSchema,
  status: Type.Union([Type.Literal('invited'), Type.Literal('active')], { description: 'invited until the invitation link is used to set a password' }),
  created_at: DateTime,
  last_sign_in_at: Nullable(DateTime),
});

export const InvitationSchema = Type.Object({
  user: TeamUserSchema,
  invitation_url: Type.String({ description: 'The one-time link to set a password: shown here only, pass it on' }),
  expires_at: DateTime,
});

export const InviteBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254 }), role: ConsoleRoleSchema },
  { additionalProperties: false },
);

export const ActivityEntrySchema = Type.Object({
  id: Type.String(),
  at: DateTime,
  actor: Type.Object({
    kind: Type.Union([Type.Literal('console_user'), Type.Literal('operator')]),
    id: Nullable(Type.String()),
    email: Nullable(Type.String()),
  }),
  action: Type.String({ description: 'noun.verb: api_key.create, api_key.revoke, team.invite, …' }),
  target: Nullable(Type.String({ description: 'The id of what changed' })),
  before: Nullable(Type.Object({}, { additionalProperties: true })),
  after: Nullable(Type.Object({}, { additionalProperties: true })),
});

export const ActivityPaging = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ACTIVITY_PAGE_SIZE })), offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32 })) },
  { additionalProperties: false },
);
