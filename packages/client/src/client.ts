/**
 * The client: one method per /api/v1 endpoint, grouped as the contract groups them, plus the
 * helpers built on them (iterate, sendLarge, reconcile).
 */
import { iterateMessages, type IterateOptions } from './pagination.ts';
import { reconcile, type ReconcileOptions, type ReconcileReport } from './reconcile.ts';
import { sendLarge, type SendLargeOptions, type SendLargeReport } from './send-large.ts';
import { request, transportConfig, type CallOptions, type ClientOptions, type RequestSpec, type TransportConfig } from './transport.ts';
import type {
  BatchRequest,
  BatchResponse,
  CancelResponse,
  ListMessagesQuery,
  ListTemplatesQuery,
  MessageList,
  MessageRecord,
  QuotaList,
  QuotaQuery,
  RsaRequest,
  SendMessageRequest,
  SendMessageResponse,
  SenderAccountList,
  TemplateList,
} from './types.ts';

export type { ClientOptions } from './transport.ts';


const API = '/api/v1';

function id(value: string): string {
  if (typeof value !== 'string' || value === '') throw new TypeError('a message id is required');
  return encodeURIComponent(value);
}

export class MessagesApi {
  constructor(private readonly call: <T>(spec: RequestSpec, options?: CallOptions) => Promise<T>) {}

  /** POST /messages/send: one message. 202 means queued (and charged), not delivered. */
  send(body: SendMessageRequest, options?: CallOptions): Promise<SendMessageResponse> {
    return this.call({ method: 'POST', path: `${API}/messages/send`, body }, options);
  }

  /**
   * POST /messages/batch: one template, 1 to 500 recipients. Compare `accepted` with `total` and read
   * `results`: recipients past the daily quota come back as `daily_quota_exceeded` errors.
   */
  batch(body: BatchRequest, options?: CallOptions): Promise<BatchResponse> {
    return this.call({ method: 'POST', path: `${API}/messages/batch`, body }, options);
  }

  /** POST /messages/rsa: recipients given as `rsa_phone` ciphertexts (see encryptPhone). */
  sendRsa(body: RsaRequest, options?: CallOptions): Promise<BatchResponse> {
    return this.call({ method: 'POST', path: `${API}/messages/rsa`, body }, options);
  }

  /** GET /messages/{id}. */
  get(msgId: string, options?: CallOptions): Promise<MessageRecord> {
    return this.call({ method: 'GET', path: `${API}/messages/${id(msgId)}` }, options);
  }

  /** GET /messages: one page, newest first. */
  list(query: ListMessagesQuery = {}, options?: CallOptions): Promise<MessageList> {
    return this.call({ method: 'GET', path: `${API}/messages`, query: { ...query } }, options);
  }

  /** Every message matching the filters, page after page: `for await (const m of client.messages.iterate({ status: 'failed' }))`. */
  iterate(query: ListMessagesQuery = {}, options?: IterateOptions): AsyncGenerator<MessageRecord, void, undefined> {
    return iterateMessages((pageQuery, pageOptions) => this.list(pageQuery, pageOptions), query, options);
  }

  /** POST /messages/{id}/cancel: only while queued; the record is deleted and refunded. 409 otherwise. */
  cancel(msgId: string, options?: CallOptions): Promise<CancelResponse> {
    return this.call({ method: 'POST', path: `${API}/messages/${id(msgId)}/cancel` }, options);
  }
}

export class TemplatesApi {
  constructor(private readonly call: <T>(spec: RequestSpec, options?: CallOptions) => Promise<T>) {}

  /** GET /templates: learn each template's params before sending. */
  list(query: ListTemplatesQuery = {}, options?: CallOptions): Promise<TemplateList> {
    return this.call({ method: 'GET', path: `${API}/templates`, query: { ...query } }, options);
  }
}

export class SenderAccountsApi {
  constructor(private readonly call: <T>(spec: RequestSpec, options?: CallOptions) => Promise<T>) {}

  /** GET /oas: the sender accounts (OAs) connected to the workspace. */
  list(options?: CallOptions): Promise<SenderAccountList> {
    return this.call({ method: 'GET', path: `${API}/oas` }, options);
  }
}

export class QuotaApi {
  constructor(private readonly call: <T>(spec: RequestSpec, options?: CallOptions) => Promise<T>) {}

  /** GET /quota: today's daily quota per sender account; a failure for one account is in its `error`. */
  get(query: QuotaQuery = {}, options?: CallOptions): Promise<QuotaList> {
    return this.call({ method: 'GET', path: `${API}/quota`, query: { ...query } }, options);
  }
}

export class Client {
  readonly messages: MessagesApi;
  readonly templates: TemplatesApi;
  /** Sender accounts (`GET /oas`). */
  readonly oas: SenderAccountsApi;
  readonly quota: QuotaApi;
  private readonly config: TransportConfig;

  constructor(options: ClientOptions) {
    this.config = transportConfig(options);
    const call = <T>(spec: RequestSpec, callOptions?: CallOptions) => request<T>(this.config, spec, callOptions);
    this.messages = new MessagesApi(call);
    this.templates = new TemplatesApi(call);
    this.oas = new SenderAccountsApi(call);
    this.quota = new QuotaApi(call);
  }

  /** The service address this client talks to (no trailing slash). */
  get baseUrl(): string {
    return this.config.baseUrl;
  }

  /**
   * Sends one template to any number of recipients within the sender account's daily quota: what
   * fits today now, the rest scheduled at the following days' quota reset, in chunks of 200.
   */
  sendLarge(options: SendLargeOptions): Promise<SendLargeReport> {
    return sendLarge(this, options);
  }

  /** Walks the failed messages created since `from` (failures have no webhook; the contract says to poll). */
  reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
    return reconcile(this, options);
  }
}
