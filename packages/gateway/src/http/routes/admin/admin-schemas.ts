import { Type } from 'typebox';
import { DateTime, Nullable } from '../../schemas.ts';

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
  kind: Type.Union([Type.Literal('top_up'), Type.Literal('charge'), Type.Literal('refund')]),
  amount: Type.Integer({ description: 'VND; negative for charges' }),
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
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })), offset: Type.Optional(Type.Integer({ minimum: 0 })) },
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
});

export const TemplateSyncResultSchema = Type.Object({
  workspace_id: Type.String(),
  accounts: Type.Array(TemplateSyncSummarySchema),
  count: Type.Integer(),
});
