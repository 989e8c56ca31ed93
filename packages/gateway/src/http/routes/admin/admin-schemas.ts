import { Type } from 'typebox';
import { DateTime, Nullable } from '../../schemas.ts';
import { MAX_INT32, MAX_OPERATOR_PAGE_SIZE } from '../../../lib/limits.ts';

export const WorkspaceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  balance: Type.Integer({ description: 'VND' }),
  message_cap: Nullable(Type.Integer({ description: 'Account-level message cap; null is no cap' })),
  messages_used: Type.Integer({ description: 'Messages counted against the cap (charged and not refunded)' }),
  is_demo: Type.Boolean(),
  created_at: DateTime,
});

export const LedgerEntrySchema = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('top_up'), Type.Literal('charge'), Type.Literal('refund'), Type.Literal('adjustment')], {
    description: "adjustment: the operator's credit or debit, with its reason in `note`",
  }),
  amount: Type.Integer({ description: 'VND; negative for charges and debits' }),
  balance_after: Type.Integer(),
  message_count: Type.Integer(),
  reference: Nullable(Type.String({ description: 'First message of a charge, the message of a refund' })),
  note: Nullable(Type.String()),
  created_at: DateTime,
});

export const ScopeSchema = Type.Union([Type.Literal('messages:send'), Type.Literal('messages:read'), Type.Literal('templates:read')]);

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  workspace_id: Type.String(),
  name: Type.String(),
  key_prefix: Type.String(),
  scopes: Type.Array(Type.String()),
  webhook_url: Nullable(Type.String()),
  rate_limit_per_second: Nullable(Type.Integer()),
  revoked_at: Nullable(DateTime),
  created_at: DateTime,
});

export const SenderAccountSchema = Type.Object({
  oa_id: Type.String(),
  workspace_id: Type.String(),
  name: Type.String(),
  default_mode: Type.Union([Type.Literal('plain'), Type.Literal('hashphone')]),
  daily_quota: Type.Integer(),
  status: Type.String({ description: 'connected, disconnected or relogin_required' }),
  token_problem: Nullable(Type.String({ description: 'Why the account needs the operator, when it does' })),
  has_oa_secret_key: Type.Boolean({ description: 'Whether platform event signatures can be verified' }),
  app_id: Type.String(),
  rsa_public_key: Nullable(Type.String()),
  created_at: DateTime,
});

export const Paging = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OPERATOR_PAGE_SIZE })), offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32 })) },
  { additionalProperties: false },
);

export const WorkspaceIdParams = Type.Object({ id: Type.String() });

export const TemplateSyncSummarySchema = Type.Object({
  oa_id: Type.String(),
  created: Type.Integer({ description: 'Templates first seen now (priced at the platform price)' }),
  updated: Type.Integer({ description: 'Templates whose name, status, params, preview or platform price changed' }),
  unchanged: Type.Integer(),
  failed: Type.Array(Type.Object({ template_id: Type.String(), error: Type.String() }), { description: 'Templates left as they were, and why' }),
  error: Nullable(Type.String({ description: 'Why the account could not be synced at all (nothing was changed then)' })),
  skipped: Type.Boolean({ description: 'Not synced because the account is not connected (disconnected, or needs a new refresh token): `error` says which' }),
});

export const TemplateSyncResultSchema = Type.Object({
  workspace_id: Type.String(),
  accounts: Type.Array(TemplateSyncSummarySchema),
  count: Type.Integer(),
});

export const WebhookDeliveryStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')], {
  description: 'pending (not delivered yet), delivered (a 2xx answer), failed (no 2xx after the last retry), cancelled (its key was revoked or lost its URL)',
});

export const WebhookDeliverySchema = Type.Object({
  id: Type.String({ description: 'Stable per delivery: the X-Gateway-Delivery-Id header on every attempt' }),
  message_id: Type.String(),
  workspace_id: Type.String(),
  api_key_id: Type.String({ description: 'The key that sent the message and signs the report' }),
  url: Type.String(),
  status: WebhookDeliveryStatusSchema,
  attempts: Type.Integer({ description: 'Attempts so far, redeliveries included (X-Gateway-Attempt of the last one)' }),
  next_attempt_at: Nullable(DateTime),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  delivered_at: Nullable(DateTime),
  failed_at: Nullable(DateTime),
  created_at: DateTime,
  updated_at: DateTime,
});

export const WebhookAttemptSchema = Type.Object({
  attempt: Type.Integer(),
  started_at: DateTime,
  url: Type.String(),
  status_code: Nullable(Type.Integer({ description: 'Null when no answer came' })),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String({ description: 'Timeout, connection error, refused target, or the start of a non-2xx answer' })),
  outcome: Type.String({ description: 'delivered, retry, failed, or released (cut short by a stopping worker; not counted)' }),
});

export const WebhookDeliveryDetailSchema = Type.Intersect([
  WebhookDeliverySchema,
  Type.Object({ body: Type.String({ description: 'The exact bytes sent (and signed) on every attempt' }), attempt_log: Type.Array(WebhookAttemptSchema) }),
]);

export const OperatorTokenSchema = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'Who uses it: the name the audit log shows for its changes' }),
  token_prefix: Type.String({ description: 'The first characters of the token, to tell tokens apart' }),
  created_by: Type.String(),
  created_at: DateTime,
  revoked_at: Nullable(DateTime),
});

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  at: DateTime,
  workspace_id: Nullable(Type.String({ description: 'Null for a change of the service itself (an operator token)' })),
  actor: Type.Object({
    kind: Type.Union([Type.Literal('console_user'), Type.Literal('operator')]),
    id: Nullable(Type.String({ description: "The console user's id, or the named operator token's id" })),
    name: Nullable(Type.String({ description: "The console user's e-mail address, or the operator's name (`bootstrap token` for TMS_ADMIN_TOKEN, `tms admin (user@host)` on the command line)" })),
  }),
  action: Type.String({ description: 'noun.verb: workspace.create, wallet.adjust, api_key.revoke, operator_token.create, …' }),
  target: Nullable(Type.String({ description: 'The id of what changed' })),
  before: Nullable(Type.Object({}, { additionalProperties: true, description: 'The values before the change; never secrets' })),
  after: Nullable(Type.Object({}, { additionalProperties: true, description: 'The values after the change; never secrets' })),
});
