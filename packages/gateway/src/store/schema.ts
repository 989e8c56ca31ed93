/** Row types of every table, as Kysely sees them. Times are epoch milliseconds. */
export interface WorkspaceRow {
  id: string;
  name: string;
  status: 'active' | 'suspended';
  balance: number;
  message_cap: number | null;
  messages_accepted: number;
  is_demo: number;
  created_at: number;
  updated_at: number;
}

export interface LedgerRow {
  id: string;
  workspace_id: string;
  /** adjustment: an operator's credit or debit, with its reason in `note`. */
  kind: 'top_up' | 'charge' | 'refund' | 'adjustment';
  amount: number;
  balance_after: number;
  message_count: number;
  reference: string | null;
  note: string | null;
  created_at: number;
}

export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  encrypted_key: string;
  scopes: string;
  webhook_url: string | null;
  rate_limit_per_second: number | null;
  revoked_at: number | null;
  created_at: number;
  last_used_at: number | null;
}

export interface SenderAccountRow {
  oa_id: string;
  workspace_id: string;
  name: string;
  default_mode: 'plain' | 'hashphone';
  daily_quota: number;
  status: 'connected' | 'disconnected' | 'relogin_required';
  app_id: string;
  encrypted_app_secret: string;
  encrypted_refresh_token: string;
  encrypted_access_token: string | null;
  access_token_expires_at: number | null;
  rsa_public_key: string | null;
  encrypted_oa_secret_key: string | null;
  token_refresh_lease_until: number | null;
  token_problem: string | null;
  created_at: number;
  updated_at: number;
}

export interface TemplateRow {
  template_id: string;
  workspace_id: string;
  oa_id: string;
  name: string;
  status: TemplateStatus;
  template_type: number;
  preview_url: string;
  params: string;
  /** VND charged per message: the operator's price, or the platform's while price_source is 'platform'. */
  price: number;
  price_source: PriceSource;
  /** When template sync last applied the platform's view of this template; null if never (or changed by the operator since). */
  synced_at: number | null;
  created_at: number;
  updated_at: number;
}

/** 'operator': registered or updated by the operator, whose price wins; 'platform': first seen through template sync. */
export type PriceSource = 'operator' | 'platform';

export const TEMPLATE_STATUSES = ['ENABLE', 'PENDING_REVIEW', 'REJECT', 'DISABLE', 'DELETE'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

export const MESSAGE_STATUSES = ['queued', 'sending', 'sent', 'delivered', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export type SendMode = 'plain' | 'hashphone' | 'rsa';

/** A row of messages: what a message is, fixed when it is accepted (only personal data is ever erased). */
export interface AcceptedMessageRow {
  id: string;
  workspace_id: string;
  api_key_id: string;
  tracking_id: string;
  mode: SendMode;
  phone: string | null;
  carrier: string | null;
  rsa_phone: string | null;
  source: string;
  template_id: string;
  oa_id: string;
  template_data: string;
  price: number;
  quota_day: string | null;
  scheduled_at: number | null;
  created_at: number;
}

/**
 * A row of message_states, one per message and keyed by its id: what a send changes. The fixed
 * columns its indexes and the queue's reads need (workspace, sender account, quota day, creation
 * time) are copies of the message's own.
 */
export interface MessageStateRow {
  id: string;
  workspace_id: string;
  oa_id: string;
  quota_day: string | null;
  created_at: number;
  status: MessageStatus;
  due_at: number;
  attempts: number;
  lease_expires_at: number | null;
  /** When the reconciler found this claim expired with the send's outcome unknown (README: reconciliation). */
  unconfirmed_since: number | null;
  provider_msg_id: string | null;
  sent_at: number | null;
  /** When the platform's status endpoint was last asked about this sent message (overdue delivery event). */
  status_checked_at: number | null;
  delivered_at: number | null;
  failed_at: number | null;
  error_code: number | null;
  error_message: string | null;
  error_reason: string | null;
  /** When the state last changed (erasing personal data does not change it). */
  updated_at: number;
}

/** A message as it is read: its row of messages with its state. */
export interface MessageRow extends AcceptedMessageRow, MessageStateRow {}

export interface QuotaReservationRow {
  oa_id: string;
  day: string;
  reserved: number;
}

export interface IdempotencyRecordRow {
  workspace_id: string;
  idempotency_key: string;
  request_hash: string;
  /** What the request did, as JSON (an acceptance's result, a cancelled message's id). */
  result: string | null;
  /** Records written before results were stored hold the HTTP response instead; they expire within 24 hours of the upgrade. */
  status_code: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface PlatformEventRow {
  event_key: string;
  event_name: string;
  oa_id: string | null;
  message_id: string | null;
  received_at: number;
}

export interface WebhookDeliveryRow {
  id: string;
  message_id: string;
  workspace_id: string;
  api_key_id: string;
  url: string;
  body: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** attempts when the operator last redelivered it: the retry ladder counts from there. */
  attempts_at_redelivery: number;
  next_attempt_at: number;
  lease_expires_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
  failed_at: number | null;
  created_at: number;
  updated_at: number;
}

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export interface WebhookAttemptRow {
  delivery_id: string;
  id: string;
  attempt: number;
  url: string;
  started_at: number;
  latency_ms: number;
  status_code: number | null;
  error: string | null;
  outcome: 'delivered' | 'retry' | 'failed' | 'released';
}

export interface SchemaMigrationRow {
  version: string;
  applied_at: number;
}

export type ConsoleRole = 'owner' | 'developer' | 'viewer';

export interface ConsoleUserRow {
  id: string;
  workspace_id: string;
  email: string;
  role: ConsoleRole;
  password_hash: string | null;
  invitation_hash: string | null;
  invitation_expires_at: number | null;
  last_sign_in_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ConsoleSessionRow {
  id_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

export interface OperatorTokenRow {
  id: string;
  name: string;
  token_hash: string;
  token_prefix: string;
  created_by: string;
  created_at: number;
  revoked_at: number | null;
}

export interface AuditLogRow {
  id: string;
  workspace_id: string | null;
  actor_kind: 'console_user' | 'operator';
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target: string | null;
  before_state: string | null;
  after_state: string | null;
  created_at: number;
}

export interface Database {
  workspaces: WorkspaceRow;
  wallet_ledger: LedgerRow;
  api_keys: ApiKeyRow;
  sender_accounts: SenderAccountRow;
  templates: TemplateRow;
  messages: AcceptedMessageRow;
  message_states: MessageStateRow;
  quota_reservations: QuotaReservationRow;
  idempotency_records: IdempotencyRecordRow;
  platform_events: PlatformEventRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_attempts: WebhookAttemptRow;
  schema_migrations: SchemaMigrationRow;
  console_users: ConsoleUserRow;
  console_sessions: ConsoleSessionRow;
  audit_log: AuditLogRow;
  operator_tokens: OperatorTokenRow;
}
