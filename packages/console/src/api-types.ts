/**
 * Bodies of the console API (/console/api), field for field as the console API contract gives them.
 * Names stay snake_case as on the wire. Times are ISO 8601 UTC strings; money is integer VND.
 */

export type Role = 'owner' | 'developer' | 'viewer';
export type MessageStatus = 'queued' | 'sending' | 'sent' | 'delivered' | 'failed';
export type SendMode = 'plain' | 'hashphone';
export type Scope = 'messages:send' | 'messages:read' | 'templates:read';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';
export type TemplateStatus = 'ENABLE' | 'PENDING_REVIEW' | 'REJECT' | 'DISABLE' | 'DELETE';

export const MESSAGE_STATUSES: readonly MessageStatus[] = ['queued', 'sending', 'sent', 'delivered', 'failed'];
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'cancelled'];
export const TEMPLATE_STATUSES: readonly TemplateStatus[] = ['ENABLE', 'PENDING_REVIEW', 'REJECT', 'DISABLE', 'DELETE'];
export const SCOPES: readonly Scope[] = ['messages:send', 'messages:read', 'templates:read'];
export const ROLES: readonly Role[] = ['owner', 'developer', 'viewer'];

export interface ErrorEnvelope {
  error: { code: number; type: string; message: string };
}

export interface SessionView {
  user: { id: string; email: string; role: Role };
  workspace: { id: string; name: string };
  csrf_token: string;
  expires_at: string;
}

export interface InvitationView {
  email: string;
  role: Role;
  workspace: { id: string; name: string };
  expires_at: string;
}

export interface QuotaView {
  oa_id: string;
  name: string;
  daily_quota: number;
  used: number;
  remaining: number;
  resets_at: string;
}

export interface Message {
  msg_id: string;
  tracking_id: string;
  status: MessageStatus;
  /** Null for messages sent with an encrypted phone. */
  phone: string | null;
  carrier: string | null;
  source: string;
  template_id: string;
  oa_id: string;
  provider_msg_id: string | null;
  error_code: number | null;
  error_message: string | null;
  /** Vietnamese explanation of a failure. */
  error_reason: string | null;
  scheduled_at: string | null;
  sent_at: string | null;
  delivered_at: string | null;
  failed_at: string | null;
  created_at: string;
}

export interface DeliveryRateDay {
  /** Vietnam day, YYYY-MM-DD. */
  day: string;
  sent: number;
  delivered: number;
  failed: number;
  /** 0..1, null when nothing was sent that day. */
  rate: number | null;
}

export interface Overview {
  balance: number;
  messages_today: Record<MessageStatus, number>;
  delivery_rate: DeliveryRateDay[];
  quotas: QuotaView[];
  latest_failures: Message[];
}

export interface MessageList {
  messages: Message[];
  limit: number;
  offset: number;
  count: number;
  has_more: boolean;
}

export interface TimelineEvent {
  event: 'created' | 'scheduled' | 'sent' | 'delivered' | 'failed';
  at: string;
  error_code?: number | null;
  error_message?: string | null;
  error_reason?: string | null;
}

export interface WebhookDelivery {
  id: string;
  message_id: string;
  api_key_id: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  failed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryAttempt {
  attempt: number;
  started_at: string;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  outcome: string;
}

export interface WebhookDeliveryDetail extends WebhookDelivery {
  /** The exact JSON text that was sent. */
  body: string;
  headers: Record<string, string>;
  attempt_log: DeliveryAttempt[];
}

export interface MessageDetail {
  message: Message;
  timeline: TimelineEvent[];
  reports: WebhookDeliveryDetail[];
}

export interface TemplateParam {
  name: string;
  type: string;
  required: boolean;
  min_length: number;
  max_length: number;
}

export interface Template {
  template_id: string;
  name: string;
  status: TemplateStatus;
  oa_id: string;
  oa_name: string;
  template_type: number;
  price: number;
  preview_url: string;
  params: TemplateParam[];
}

export interface TemplateList {
  templates: Template[];
}

export interface SenderAccount {
  oa_id: string;
  name: string;
  status: string;
  default_mode: SendMode;
  rsa_public_key: string | null;
  quota: QuotaView;
}

export interface SenderAccountList {
  sender_accounts: SenderAccount[];
}

export interface ApiKeyView {
  id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  webhook_url: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface ApiKeyList {
  api_keys: ApiKeyView[];
}

export interface CreatedApiKey extends ApiKeyView {
  /** The whole key, shown once. */
  key: string;
}

export interface TestReportResult {
  url: string;
  status_code: number | null;
  latency_ms: number;
  response_body: string;
  error: string | null;
  request_body: string;
}

export interface WebhookDeliveryList {
  deliveries: WebhookDelivery[];
  count: number;
  has_more: boolean;
}

export interface RedeliverFailedResult {
  redelivered: number;
  skipped: number;
  failed_since: string;
}

export interface LedgerEntry {
  id: string;
  kind: string;
  amount: number;
  balance_after: number;
  message_count: number;
  reference: string | null;
  note: string | null;
  created_at: string;
}

export interface Wallet {
  balance: number;
  ledger: LedgerEntry[];
  has_more: boolean;
}

export interface TeamUser {
  id: string;
  email: string;
  role: Role;
  status: 'invited' | 'active';
  created_at: string;
  last_sign_in_at: string | null;
}

export interface TeamList {
  users: TeamUser[];
}

export interface CreatedInvitation {
  user: TeamUser;
  invitation_url: string;
  expires_at: string;
}

export interface ActivityEntry {
  id: string;
  at: string;
  actor: { kind: 'console_user' | 'operator'; id: string | null; email: string | null };
  action: string;
  target: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface ActivityList {
  entries: ActivityEntry[];
  has_more: boolean;
}

export type TemplateData = Record<string, string>;

export interface SendRequest {
  template_id: string;
  phone: string;
  template_data?: TemplateData;
  tracking_id?: string;
  send_at?: string;
  mode?: SendMode;
  api_key_id?: string;
}

export interface SendResponse {
  msg_id: string;
  tracking_id: string;
  status: 'queued';
  scheduled_at: string | null;
}

export interface BatchRecipient {
  phone: string;
  template_data?: TemplateData;
  tracking_id?: string;
}

export interface BatchRequest {
  template_id: string;
  recipients: BatchRecipient[];
  send_at?: string;
  mode?: SendMode;
  api_key_id?: string;
}

export interface BatchResultItem {
  phone?: string;
  msg_id?: string;
  tracking_id?: string;
  status: 'queued' | 'error';
  /** A stable code, a colon and an explanation. */
  error?: string;
}

export interface BatchResponse {
  accepted: number;
  total: number;
  scheduled_at: string | null;
  results: BatchResultItem[];
}

export interface CsvPreviewRow {
  /** 1-based data row number. */
  row: number;
  phone: string;
  template_data: TemplateData;
  tracking_id: string | null;
  problem: string | null;
}

export interface CsvPreview {
  template_id: string;
  columns: string[];
  rows: CsvPreviewRow[];
  valid_rows: number;
  invalid_rows: number;
  unit_price: number;
  total_cost: number;
  balance: number;
  quota: QuotaView;
}

export interface CancelResponse {
  cancelled: true;
  msg_id: string;
}
