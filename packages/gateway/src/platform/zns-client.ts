import { Agent, request, type Dispatcher } from 'undici';

/**
 * The ZNS client: the same code talks to the real platform and to packages/zns-sim.
 * Wire facts come from ../shared/reference/zns-platform.md: OAuth v4 with a form body and the
 * `secret_key` header; business calls with the bare `access_token` header; errors as HTTP 200 with
 * a non-zero `error`; numbers that often arrive as strings (parsed leniently here).
 */
export interface ZnsEndpoints {
  /** https://oauth.zaloapp.com in production. */
  oauthBaseUrl: string;
  /** https://business.openapi.zalo.me in production. */
  apiBaseUrl: string;
  /** Per request; a request that takes longer counts as a transient failure. */
  timeoutMs: number;
}

/** The platform could not be reached or answered 5xx/garbage: try again later. */
export class PlatformUnavailableError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null = null,
  ) {
    super(message);
  }
}

export type ZnsResult<T> = { ok: true; data: T } | { ok: false; code: number; message: string };

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresInSeconds: number;
}

export type SendKind = 'plain' | 'hashphone' | 'rsa';

export interface SendRequest {
  kind: SendKind;
  /** The 84… number, its SHA-256 hex (hashphone) or the base64 RSA ciphertext (rsa). */
  recipient: string;
  templateId: string;
  templateData: Record<string, string>;
  trackingId: string;
}

export interface SendAccepted {
  msgId: string;
  sentTime: number;
  quota: { dailyQuota: number; remainingQuota: number } | null;
}

export interface QuotaInfo {
  dailyQuota: number;
  remainingQuota: number;
}

export interface MessageStatusInfo {
  /** -1 unknown to the platform, 0 handed to Zalo but not on the device, 1 delivered. */
  status: number;
  deliveryTime: number | null;
}

export interface TemplateSummary {
  templateId: string;
  templateName: string;
  status: string;
}

export interface TemplateDetail extends TemplateSummary {
  params: { name: string; required: boolean; type: string; maxLength: number; minLength: number }[];
  previewUrl: string;
  price: number | null;
}

const SEND_PATHS: Record<SendKind, string> = {
  plain: '/message/template',
  hashphone: '/message/template/hashphone',
  rsa: '/rsa/message/template',
};

const RECIPIENT_FIELD: Record<SendKind, string> = { plain: 'phone', hashphone: 'hash_phone', rsa: 'rsa_phone' };

/** The platform sends numbers as strings, numbers or null: accept them all. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

type Json = Record<string, unknown>;

/** Template status codes of /template/all (reference §4): strings are refused with -132. */
const TEMPLATE_STATUS_CODES: Record<string, number> = { ENABLE: 1, PENDING_REVIEW: 2, REJECT: 3, DISABLE: 4, DELETE: 5 };

export class ZnsClient {
  constructor(
    private readonly endpoints: ZnsEndpoints,
    private readonly dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 512, pipelining: 1 }),
  ) {}

  private async call(url: string, options: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }): Promise<Json> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: options.method,
        headers: options.headers,
        body: options.body,
        dispatcher: this.dispatcher,
        headersTimeout: this.endpoints.timeoutMs,
        bodyTimeout: this.endpoints.timeoutMs,
      });
    } catch (error) {
      throw new PlatformUnavailableError(`ZNS request failed: ${(error as Error).message}`);
    }
    const text = await response.body.text().catch(() => '');
    if (response.statusCode >= 500 || response.statusCode === 429) {
      throw new PlatformUnavailableError(`ZNS answered HTTP ${response.statusCode}`, response.statusCode);
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object') return parsed as Json;
    } catch {
      // handled below
    }
    throw new PlatformUnavailableError(`ZNS answered HTTP ${response.statusCode} with a body that is not JSON`, response.statusCode);
  }

  private result<T>(body: Json, read: (body: Json) => T): ZnsResult<T> {
    const code = toNumber(body.error) ?? 0;
    if (code !== 0) return { ok: false, code, message: String(body.message ?? body.error_description ?? body.error_name ?? '') };
    return { ok: true, data: read(body) };
  }

  private business(path: string, accessToken: string, init: { method: 'GET' | 'POST'; query?: Record<string, string>; body?: unknown }): Promise<Json> {
    const url = new URL(path, this.endpoints.apiBaseUrl);
    for (const [name, value] of Object.entries(init.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = { access_token: accessToken };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    return this.call(url.toString(), { method: init.method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  }

  /** Exchanges a refresh token (single use) for a new pair. */
  async refreshAccessToken(input: { appId: string; appSecret: string; refreshToken: string }): Promise<ZnsResult<TokenPair>> {
    const body = new URLSearchParams({ refresh_token: input.refreshToken, app_id: input.appId, grant_type: 'refresh_token' }).toString();
    const answer = await this.call(new URL('/v4/oa/access_token', this.endpoints.oauthBaseUrl).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', secret_key: input.appSecret },
      body,
    });
    if (typeof answer.access_token !== 'string' || typeof answer.refresh_token !== 'string') {
      const code = toNumber(answer.error);
      return { ok: false, code: code && code !== 0 ? code : -1, message: String(answer.error_description ?? answer.error_reason ?? answer.message ?? 'token refresh refused') };
    }
    return {
      ok: true,
      data: { accessToken: answer.access_token, refreshToken: answer.refresh_token, expiresInSeconds: toNumber(answer.expires_in) ?? 90_000 },
    };
  }

  async sendMessage(accessToken: string, message: SendRequest): Promise<ZnsResult<SendAccepted>> {
    const body = await this.business(SEND_PATHS[message.kind], accessToken, {
      method: 'POST',
      body: {
        [RECIPIENT_FIELD[message.kind]]: message.recipient,
        template_id: message.templateId,
        template_data: message.templateData,
        tracking_id: message.trackingId,
      },
    });
    return this.result(body, ({ data }) => {
      const fields = (data ?? {}) as Json;
      const quota = (fields.quota ?? null) as Json | null;
      const dailyQuota = toNumber(quota?.dailyQuota);
      const remainingQuota = toNumber(quota?.remainingQuota);
      return {
        msgId: String(fields.msg_id ?? ''),
        sentTime: toNumber(fields.sent_time) ?? Date.now(),
        quota: dailyQuota !== null && remainingQuota !== null ? { dailyQuota, remainingQuota } : null,
      };
    });
  }

  async getQuota(accessToken: string): Promise<ZnsResult<QuotaInfo>> {
    const body = await this.business('/message/quota', accessToken, { method: 'GET' });
    return this.result(body, ({ data }) => {
      const fields = (data ?? {}) as Json;
      return { dailyQuota: toNumber(fields.dailyQuota) ?? 0, remainingQuota: toNumber(fields.remainingQuota) ?? 0 };
    });
  }

  async getMessageStatus(accessToken: string, msgId: string): Promise<ZnsResult<MessageStatusInfo>> {
    const body = await this.business('/message/status', accessToken, { method: 'GET', query: { message_id: msgId } });
    return this.result(body, ({ data }) => {
      const fields = (data ?? {}) as Json;
      return { status: toNumber(fields.status) ?? -1, deliveryTime: toNumber(fields.delivery_time) };
    });
  }

  async listTemplates(accessToken: string, page: { offset: number; limit: number; status?: string }): Promise<ZnsResult<{ templates: TemplateSummary[]; total: number }>> {
    const query: Record<string, string> = { offset: String(page.offset), limit: String(page.limit) };
    if (page.status !== undefined) query.status = String(TEMPLATE_STATUS_CODES[page.status] ?? page.status);
    const body = await this.business('/template/all', accessToken, { method: 'GET', query });
    return this.result(body, ({ data, metadata }) => ({
      templates: ((data ?? []) as Json[]).map((row) => ({ templateId: String(row.templateId), templateName: String(row.templateName ?? ''), status: String(row.status ?? '') })),
      total: toNumber((metadata as Json | undefined)?.total) ?? 0,
    }));
  }

  async getTemplateInfo(accessToken: string, templateId: string): Promise<ZnsResult<TemplateDetail>> {
    const body = await this.business('/template/info/v2', accessToken, { method: 'GET', query: { template_id: templateId } });
    return this.result(body, ({ data }) => {
      const fields = (data ?? {}) as Json;
      return {
        templateId: String(fields.templateId ?? templateId),
        templateName: String(fields.templateName ?? ''),
        status: String(fields.status ?? ''),
        previewUrl: String(fields.previewUrl ?? ''),
        price: toNumber(fields.price),
        params: ((fields.listParams ?? []) as Json[]).map((param) => ({
          name: String(param.name),
          required: param.require === true || param.require === 'true',
          type: String(param.type ?? 'STRING'),
          maxLength: toNumber(param.maxLength) ?? 0,
          minLength: toNumber(param.minLength) ?? 0,
        })),
      };
    });
  }

  async getRsaPublicKey(accessToken: string): Promise<ZnsResult<string>> {
    const body = await this.business('/rsa/key/get', accessToken, { method: 'GET' });
    return this.result(body, ({ data }) => String(((data ?? {}) as Json).public_key ?? ''));
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
