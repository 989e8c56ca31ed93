import type { Dispatcher } from 'undici';
import { OnDemandAgent, type RequestDispatcher } from '../lib/http-agent.ts';
import { headerValueProblem } from './header-value.ts';

/**
 * The ZNS client: the same code talks to the real platform and to packages/zns-sim.
 * Wire facts come from docs/zns-platform.md: OAuth v4 with a form body and the
 * `secret_key` header; business calls with the bare `access_token` header; errors as HTTP 200 with
 * a non-zero `error`; numbers that often arrive as strings (parsed leniently here).
 */
export interface ZnsEndpoints {
  /** https://oauth.zaloapp.com in production. */
  oauthBaseUrl: string;
  /** https://business.openapi.zalo.me in production. */
  apiBaseUrl: string;
  /**
   * Deadline of a whole call: waiting for a pooled connection, connecting, sending, the answer's
   * headers and its body. A call never waits longer, whatever the platform or the pool does.
   */
  timeoutMs: number;
  /** Keep-alive connections per platform host (default 512). */
  connections?: number;
}

/**
 * Why a send's outcome is unknown: the request was written (or may have been), and no answer that
 * says what the platform did came back. The platform may have taken it.
 */
export type UnknownOutcomeCause = 'timeout' | 'connection_lost' | 'ambiguous_answer';

/** The platform could not be reached or answered 5xx/garbage: try again later. */
export class PlatformUnavailableError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null = null,
    /**
     * Null when the platform certainly did not carry the request out (no connection, refused
     * before it was written, a 429 or 503, a 5xx with the platform's own error body); otherwise
     * why it may have.
     */
    readonly unknownOutcome: UnknownOutcomeCause | null = null,
  ) {
    super(message);
    this.name = 'PlatformUnavailableError';
  }
}

/**
 * A call that was never sent because one of its header values cannot travel over HTTP (a stored
 * credential with a control or non-Latin-1 character). Sending it again cannot help.
 */
export class InvalidPlatformRequestError extends Error {
  constructor(
    readonly header: string,
    readonly problem: string,
  ) {
    super(`the ${header} header cannot be sent to the platform: it ${problem}`);
    this.name = 'InvalidPlatformRequestError';
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

/** Template status codes of /template/all (docs/zns-platform.md): strings are refused with -132. */
const TEMPLATE_STATUS_CODES: Record<string, number> = { ENABLE: 1, PENDING_REVIEW: 2, REJECT: 3, DISABLE: 4, DELETE: 5 };

/** What came back: the status and the whole body. */
interface Answer {
  statusCode: number;
  text: string;
}

/** Where a call goes: parsed once, not per call (a send is made per message). */
interface Target {
  origin: string;
  /** Path and query. */
  path: string;
}

function targetOf(url: URL): Target {
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

interface CallOptions {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** Whether the body is the platform's own error answer (`{"error": -…}`), which says it did nothing. */
function isPlatformErrorBody(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' && (toNumber((parsed as Json).error) ?? 0) !== 0;
  } catch {
    return false;
  }
}

/**
 * Whether an answer that is not a readable platform answer leaves a send's outcome unknown. 429
 * and 503 mean the request was not handled; a 5xx with the platform's error body says the same.
 * Any other 5xx (a proxy's 500, 502 or 504) or a 2xx we cannot read may come after the platform
 * took the send. A 3xx or 4xx from something in front of the platform means it never got there.
 */
function unreadableAnswerCause(statusCode: number, text: string): UnknownOutcomeCause | null {
  if (statusCode === 429 || statusCode === 503) return null;
  if (statusCode >= 500) return isPlatformErrorBody(text) ? null : 'ambiguous_answer';
  return statusCode < 300 ? 'ambiguous_answer' : null;
}

export class ZnsClient {
  private readonly dispatcher: RequestDispatcher;
  private readonly sendTargets: Record<SendKind, Target>;

  constructor(
    private readonly endpoints: ZnsEndpoints,
    dispatcher?: RequestDispatcher,
  ) {
    this.dispatcher =
      dispatcher ??
      new OnDemandAgent({ keepAliveTimeout: 30_000, connections: endpoints.connections ?? 512, pipelining: 1, connect: { timeout: endpoints.timeoutMs } });
    const sendTarget = (kind: SendKind): Target => targetOf(new URL(SEND_PATHS[kind], endpoints.apiBaseUrl));
    this.sendTargets = { plain: sendTarget('plain'), hashphone: sendTarget('hashphone'), rsa: sendTarget('rsa') };
  }

  private async call(target: Target, options: CallOptions): Promise<Json> {
    for (const name in options.headers) {
      const problem = headerValueProblem(options.headers[name]!);
      if (problem) throw new InvalidPlatformRequestError(name, problem);
    }
    const { statusCode, text } = await this.exchange(target, options);
    if (statusCode >= 500 || statusCode === 429) {
      throw new PlatformUnavailableError(`ZNS answered HTTP ${statusCode}`, statusCode, unreadableAnswerCause(statusCode, text));
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object') return parsed as Json;
    } catch {
      // handled below
    }
    throw new PlatformUnavailableError(`ZNS answered HTTP ${statusCode} with a body that is not JSON`, statusCode, unreadableAnswerCause(statusCode, text));
  }

  /**
   * One request under one overall deadline. It tracks whether the request reached a connection
   * (undici starts it on a connected socket right before writing it): a failure before that point
   * certainly did not reach the platform, a failure after it leaves the outcome unknown. A request
   * still waiting for a pooled connection when the deadline passes is given up at once and, if
   * the pool ever hands it a connection, cancelled before a byte is written.
   */
  private exchange(target: Target, options: CallOptions): Promise<Answer> {
    const { timeoutMs } = this.endpoints;
    return new Promise<Answer>((resolve, reject) => {
      let started = false;
      let settled = false;
      let controller: Dispatcher.DispatchController | null = null;
      let statusCode = 0;
      const chunks: Buffer[] = [];
      const settle = (outcome: Answer | PlatformUnavailableError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (outcome instanceof PlatformUnavailableError) reject(outcome);
        else resolve(outcome);
      };
      // One timer for the whole call (a plain timer: an AbortSignal per call costs more, and undici's
      // own timeouts cover only parts of it).
      const deadline = setTimeout(() => {
        settle(new PlatformUnavailableError(`ZNS did not answer within ${timeoutMs} ms`, null, started ? 'timeout' : null));
        controller?.abort(new Error(`deadline of ${timeoutMs} ms passed`));
      }, timeoutMs);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (requestController) => {
          if (settled) {
            requestController.abort(new Error(`deadline of ${timeoutMs} ms passed before a connection was free`));
            return;
          }
          controller = requestController;
          started = true;
        },
        onResponseStart: (_controller, status) => {
          // 1xx interim answers are followed by the real one.
          if (status >= 200) statusCode = status;
        },
        onResponseData: (_controller, chunk) => {
          chunks.push(chunk);
        },
        onResponseEnd: () => settle({ statusCode, text: (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8') }),
        onResponseError: (_controller, error) => {
          settle(new PlatformUnavailableError(`ZNS request failed: ${error.message}`, null, started ? 'connection_lost' : null));
        },
      };
      try {
        this.dispatcher.dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: options.method,
            headers: options.headers,
            body: options.body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          handler,
        );
      } catch (error) {
        settle(new PlatformUnavailableError(`ZNS request failed: ${(error as Error).message}`));
      }
    });
  }

  private result<T>(body: Json, read: (body: Json) => T): ZnsResult<T> {
    const code = toNumber(body.error) ?? 0;
    if (code !== 0) return { ok: false, code, message: String(body.message ?? body.error_description ?? body.error_name ?? '') };
    return { ok: true, data: read(body) };
  }

  private business(path: string | Target, accessToken: string, init: { method: 'GET' | 'POST'; query?: Record<string, string>; body?: unknown }): Promise<Json> {
    let target: Target;
    if (typeof path === 'string') {
      const url = new URL(path, this.endpoints.apiBaseUrl);
      for (const [name, value] of Object.entries(init.query ?? {})) url.searchParams.set(name, value);
      target = targetOf(url);
    } else target = path;
    const headers: Record<string, string> = { access_token: accessToken };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    return this.call(target, { method: init.method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  }

  /** Exchanges a refresh token (single use) for a new pair. */
  async refreshAccessToken(input: { appId: string; appSecret: string; refreshToken: string }): Promise<ZnsResult<TokenPair>> {
    const body = new URLSearchParams({ refresh_token: input.refreshToken, app_id: input.appId, grant_type: 'refresh_token' }).toString();
    const answer = await this.call(targetOf(new URL('/v4/oa/access_token', this.endpoints.oauthBaseUrl)), {
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
    const body = await this.business(this.sendTargets[message.kind], accessToken, {
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
