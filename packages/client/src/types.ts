/**
 * Request and response types of /api/v1, field for field as the public contract
 * (docs/api.md) defines them.
 * Field names stay snake_case, as on the wire, so a record can be logged, stored or compared with
 * the API reference without translation.
 * They are checked at compile time against the types generated from the service's OpenAPI document
 * (generated/api-types.ts, checks in test/types-match-api.test-d.ts): a field the API adds, drops or
 * retypes fails the typecheck until it is changed here too.
 */
import type { TmsErrorType } from './errors.ts';

/** ISO 8601 date-time. Responses use UTC with milliseconds; `reset_at` uses Vietnam time (+07:00). */
export type DateTimeString = string;

export type TemplateStatus = 'ENABLE' | 'PENDING_REVIEW' | 'REJECT' | 'DISABLE' | 'DELETE';
export type MessageStatus = 'queued' | 'sending' | 'sent' | 'delivered' | 'failed';
export type SendMode = 'plain' | 'hashphone';
export type Scope = 'messages:send' | 'messages:read' | 'templates:read';

/** 2.4: parameter name → value; values are always strings. */
export type TemplateData = Record<string, string>;

/** 2.1 param object. */
export interface TemplateParam {
  name: string;
  type: string;
  required: boolean;
  max_length: number;
  min_length: number;
}

/** 2.1 Template. `price` (VND per message) is an addition of this service, beside the contract's fields. */
export interface Template {
  template_id: string;
  name: string;
  status: TemplateStatus;
  template_type: number;
  oa_id: string;
  oa_name: string;
  preview_url: string;
  params: TemplateParam[];
  price: number;
}

/** 2.2 Sender account (OA). */
export interface SenderAccount {
  oa_id: string;
  name: string;
}

/** 2.3 Message record. */
export interface MessageRecord {
  msg_id: string;
  tracking_id: string;
  status: MessageStatus;
  /** Null for messages sent through the RSA path. */
  phone: string | null;
  carrier: string | null;
  source: string;
  template_id: string;
  oa_id: string;
  provider_msg_id: string | null;
  /** The platform's integer code (e.g. -108) or a negative code of the service's own; null without an error. */
  error_code: number | null;
  error_message: string | null;
  /** Vietnamese explanation, only when failed. */
  error_reason: string | null;
  scheduled_at: DateTimeString | null;
  sent_at: DateTimeString | null;
  delivered_at: DateTimeString | null;
  failed_at: DateTimeString | null;
  created_at: DateTimeString;
}

/** 2.5 Batch result item. */
export interface BatchResultItem {
  /** Present in batch results, absent in RSA results. */
  phone?: string;
  /** Present only when status is queued. */
  msg_id?: string;
  tracking_id?: string;
  status: 'queued' | 'error';
  /** Present only when status is error: a stable code, a colon and an explanation (docs/api.md). */
  error?: string;
}

/** 2.6 Quota entry. */
export interface QuotaEntry {
  oa_id: string;
  oa_name: string;
  daily_quota: number;
  remaining: number;
  used: number;
  /** Next midnight in Vietnam time, e.g. `2026-11-22T00:00:00.000+07:00`. */
  reset_at: DateTimeString;
  /** Why this sender account's quota could not be read; null when it could. */
  error: string | null;
}

/** 2.7 Error body. */
export interface ErrorBody {
  error: { code: number; type: TmsErrorType; message: string };
}

/** 4.1 POST /api/v1/messages/send. */
export interface SendMessageRequest {
  template_id: string;
  /** Local (0…), +84… or 84… form; normalised by the service, not validated. */
  phone: string;
  template_data?: TemplateData;
  tracking_id?: string;
  /** At most 60 days ahead; a past time means now; no offset means Vietnam time. */
  send_at?: DateTimeString;
  mode?: SendMode;
}

export interface SendMessageResponse {
  msg_id: string;
  tracking_id: string;
  status: 'queued';
  scheduled_at: DateTimeString | null;
}

/** 4.2 recipients[]. */
export interface BatchRecipient {
  phone: string;
  template_data?: TemplateData;
  tracking_id?: string;
}

/** 4.2 POST /api/v1/messages/batch: 1 to 500 recipients (100 to 200 advised). */
export interface BatchRequest {
  template_id: string;
  recipients: BatchRecipient[];
  send_at?: DateTimeString;
  mode?: SendMode;
}

/** 4.2 and 4.3 response. */
export interface BatchResponse {
  /** Number actually queued; compare with total and read results. */
  accepted: number;
  total: number;
  scheduled_at: DateTimeString | null;
  results: BatchResultItem[];
}

/** 4.3 recipients[]. */
export interface RsaRecipient {
  /** Standard base64 of the RSA-OAEP ciphertext (see encryptPhone). */
  rsa_phone: string;
  template_data?: TemplateData;
  tracking_id?: string;
}

/** 4.3 POST /api/v1/messages/rsa. */
export interface RsaRequest {
  template_id: string;
  recipients: RsaRecipient[];
  send_at?: DateTimeString;
}

/** 4.4 GET /api/v1/templates query. */
export interface ListTemplatesQuery {
  status?: TemplateStatus;
  oa_id?: string;
}

export interface TemplateList {
  templates: Template[];
  count: number;
}

/** 4.5 GET /api/v1/oas. */
export interface SenderAccountList {
  oas: SenderAccount[];
  count: number;
}

/** GET /api/v1/messages query, with the extra filters (template_id, oa_id, to). */
export interface ListMessagesQuery {
  tracking_id?: string;
  phone?: string;
  status?: MessageStatus;
  template_id?: string;
  oa_id?: string;
  /** Lower bound on created_at. A Date is sent as ISO 8601 UTC. */
  from?: DateTimeString | Date;
  /** Upper bound on created_at. */
  to?: DateTimeString | Date;
  /** 1..200, default 50. */
  limit?: number;
  /** Records skipped, newest first. */
  offset?: number;
}

export interface MessageList {
  messages: MessageRecord[];
  limit: number;
  offset: number;
  /** Records in this page. */
  count: number;
  has_more: boolean;
}

/** 4.8 POST /api/v1/messages/{id}/cancel. */
export interface CancelResponse {
  cancelled: true;
  msg_id: string;
}

/** 4.9 GET /api/v1/quota. */
export interface QuotaQuery {
  oa_id?: string;
}

export interface QuotaList {
  quotas: QuotaEntry[];
  count: number;
}

/** Section 6: the delivery report the service POSTs to the API key's webhook URL. */
export interface DeliveryReport {
  /** The msg_id returned at send. */
  message_id: string;
  /** The client's tracking_id, for reconciliation. */
  client_req_id: string;
  /** Sender account id (oa_id). */
  from: string;
  /** Recipient number; null for RSA messages. */
  to: string | null;
  status: 'SUCCESS';
  /** ISO 8601 with milliseconds, UTC. */
  delivered_at: DateTimeString;
  /** Message code on the platform side (provider_msg_id). */
  tracking_id: string;
}
