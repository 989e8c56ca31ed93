/**
 * One HTTP call to /api/v1 with safe retries. Uses only the global `fetch`, `AbortController` and
 * `crypto.randomUUID`, so it runs on Node 20+, Bun, Deno and edge runtimes alike.
 *
 * Safety of retries: a POST carries an Idempotency-Key generated once per logical call and reused on
 * every retry, and its body is serialised once, so the service recognises a retry of a request it
 * already accepted and answers with the first response instead of creating or charging again.
 */
import { TmsError, kindOfStatus, type TmsErrorType } from './errors.ts';
import { DEFAULT_RETRY_POLICY, backoffDelay, parseRetryAfter, sleep, type RetryPolicy } from './retry.ts';
import { withUserAgent } from './user-agent.ts';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Per-call options, accepted by every method of the client. */
export interface CallOptions {
  /** Aborts the call, its retries and its waits; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time allowed for each attempt, in ms (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  /** Retries after the first attempt (default: the client's `maxRetries`). */
  maxRetries?: number;
  /**
   * POST only: the Idempotency-Key to send (up to 255 characters). Default: a new random UUID per
   * call. Pass your own to make a call safe to repeat across process restarts, within 24 hours.
   */
  idempotencyKey?: string;
  /** X-Request-Id to send (letters, digits and `._:-`, up to 128), to find the call in the service's logs. */
  requestId?: string;
}

export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** Why the attempt failed. */
  error: TmsError;
}

export interface TransportConfig {
  apiKey: string;
  /** e.g. `https://tms.example.com` (with or without a trailing slash; `/api/v1` is added per call). */
  baseUrl: string;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: FetchLike;
  /** The caller's extra headers, without a User-Agent (that one is part of `userAgent`). */
  headers: Record<string, string>;
  /** Sent on every request: the SDK and its version, after the caller's own User-Agent if any. */
  userAgent: string;
  onRetry: ((event: RetryEvent) => void) | undefined;
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | boolean | Date | undefined>;
  body?: unknown;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export interface ClientOptions {
  /** The workspace API key (`tms_live_…`). It also signs your delivery reports (see verifyWebhook). */
  apiKey: string;
  /** The service address, e.g. `https://tms.example.com`. */
  baseUrl: string;
  /** Time allowed for each attempt, in ms (default 30 000). */
  timeoutMs?: number;
  /** Retries after a network error, timeout, 429 or 5xx (default 3). */
  maxRetries?: number;
  /** Finer retry timing (backoff base and ceiling, longest Retry-After honoured). */
  retry?: Partial<RetryPolicy>;
  /** A fetch implementation (default: the global fetch). */
  fetch?: FetchLike;
  /**
   * Extra headers on every request. A `User-Agent` given here goes before the SDK's own:
   * `my-app/2.0 tms-client-js/0.1.0 (node v22.11.0)`.
   */
  headers?: Record<string, string>;
  /** Called before each retry, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void;
}

export function transportConfig(input: ClientOptions): TransportConfig {
  if (typeof input.apiKey !== 'string' || input.apiKey === '') throw new TypeError('apiKey is required');
  if (typeof input.baseUrl !== 'string' || !/^https?:\/\//.test(input.baseUrl)) throw new TypeError('baseUrl must be an http(s) URL');
  const retry = { ...DEFAULT_RETRY_POLICY, ...input.retry };
  if (input.maxRetries !== undefined) retry.maxRetries = input.maxRetries;
  const { userAgent, headers } = withUserAgent(input.headers ?? {});
  return {
    apiKey: input.apiKey,
    baseUrl: input.baseUrl.replace(/\/+$/, ''),
    timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retry,
    // Bound late, so a runtime that installs or patches fetch after import is honoured.
    fetch: input.fetch ?? ((url, init) => fetch(url, init)),
    headers,
    userAgent,
    onRetry: input.onRetry,
  };
}

function buildUrl(config: TransportConfig, spec: RequestSpec): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(spec.query ?? {})) {
    if (value === undefined) continue;
    params.set(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const search = params.toString();
  return `${config.baseUrl}${spec.path}${search ? `?${search}` : ''}`;
}

interface Attempt {
  kind: 'response';
  response: Response;
  text: string;
}

/** Combines the caller's signal with a per-attempt timeout, without AbortSignal.any (not everywhere yet). */
function attemptSignal(timeoutMs: number, outer: AbortSignal | undefined): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no response within ${timeoutMs} ms`));
  }, timeoutMs);
  const onOuterAbort = () => controller.abort(outer?.reason);
  if (outer) {
    if (outer.aborted) controller.abort(outer.reason);
    else outer.addEventListener('abort', onOuterAbort, { once: true });
  }
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorBodyOf(body: unknown): { code: number; type: TmsErrorType | null; message: string } | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'object' || error === null) return null;
  const { code, type, message } = error as { code?: unknown; type?: unknown; message?: unknown };
  return {
    code: typeof code === 'number' ? code : 0,
    // Kept as sent even when this SDK does not list it: a newer service may add types.
    type: typeof type === 'string' && type !== '' ? (type as TmsErrorType) : null,
    message: typeof message === 'string' ? message : '',
  };
}

/**
 * A conflict is retried only when it is the service's "same Idempotency-Key still in progress"
 * answer to one of our own retries: our first attempt is still running on the server, and waiting
 * lets the retry receive its stored response. Other conflicts (cancel of a message that is no
 * longer queued) are final.
 */
function isInFlightConflict(error: TmsError, attempt: number, idempotencyKey: string | null): boolean {
  return error.type === 'idempotency_key_in_flight' && attempt > 1 && idempotencyKey !== null;
}

export async function request<T>(config: TransportConfig, spec: RequestSpec, options: CallOptions = {}): Promise<T> {
  const maxRetries = options.maxRetries ?? config.retry.maxRetries;
  const timeoutMs = options.timeoutMs ?? config.timeoutMs;
  // Generated once per logical call: every retry below sends the same key and the same bytes.
  const idempotencyKey = spec.method === 'POST' ? (options.idempotencyKey ?? crypto.randomUUID()) : null;
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const url = buildUrl(config, spec);
  const headers: Record<string, string> = {
    ...config.headers,
    accept: 'application/json',
    authorization: `Bearer ${config.apiKey}`,
    'user-agent': config.userAgent,
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
  if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;

  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    const common = { method: spec.method, path: spec.path, idempotencyKey, attempts: attempt };
    const guard = attemptSignal(timeoutMs, options.signal);
    let outcome: Attempt | TmsError;
    try {
      const response = await config.fetch(url, { method: spec.method, headers, body, signal: guard.signal });
      outcome = { kind: 'response', response, text: await response.text() };
    } catch (cause) {
      // The caller's own abort is not an error of the service: surface it as the caller raised it.
      if (options.signal?.aborted) throw options.signal.reason;
      outcome = guard.timedOut()
        ? new TmsError({ ...common, kind: 'timeout', message: `${spec.method} ${spec.path}: no response within ${timeoutMs} ms`, requestId: options.requestId, cause })
        : new TmsError({ ...common, kind: 'network', message: `${spec.method} ${spec.path}: ${describeNetworkError(cause)}`, requestId: options.requestId, cause });
    } finally {
      guard.done();
    }

    let error: TmsError;
    let retryAfter: number | null = null;
    if (outcome instanceof TmsError) {
      error = outcome;
    } else {
      const { response, text } = outcome;
      const parsed = parseJson(text);
      const requestId = response.headers.get('x-request-id') ?? options.requestId ?? null;
      if (response.ok) {
        if (parsed === undefined) {
          throw new TmsError({ ...common, kind: 'invalid_response', status: response.status, requestId, message: `${spec.method} ${spec.path}: the response is not JSON` });
        }
        return parsed as T;
      }
      retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const described = errorBodyOf(parsed);
      error = new TmsError({
        ...common,
        kind: kindOfStatus(response.status),
        type: described?.type ?? null,
        status: response.status,
        code: described?.code ?? 0,
        message: described?.message || `${spec.method} ${spec.path}: HTTP ${response.status} ${response.statusText}`.trim(),
        requestId,
        retryAfter,
      });
    }

    const delayMs = retryDelay(config.retry, error, attempt, idempotencyKey);
    if (delayMs === null || attempt > maxRetries) throw error;
    config.onRetry?.({ method: spec.method, path: spec.path, attempt, delayMs, error });
    await sleep(delayMs, options.signal);
  }
}

/** The wait before the next attempt, or null when this failure must not be retried. */
function retryDelay(policy: RetryPolicy, error: TmsError, attempt: number, idempotencyKey: string | null): number | null {
  if (error.kind === 'network' || error.kind === 'timeout' || error.kind === 'server_error') return backoffDelay(policy, attempt);
  if (error.kind === 'rate_limited') {
    if (error.retryAfter === null) return backoffDelay(policy, attempt);
    const wait = error.retryAfter * 1000;
    return wait > policy.maxRetryAfterMs ? null : wait;
  }
  if (isInFlightConflict(error, attempt, idempotencyKey)) return backoffDelay(policy, attempt);
  return null;
}

function describeNetworkError(cause: unknown): string {
  if (cause instanceof Error) {
    // Node's fetch wraps the socket error: "fetch failed" with the useful part in cause.
    const inner = (cause as { cause?: unknown }).cause;
    if (inner instanceof Error && inner.message) return `${cause.message} (${inner.message})`;
    return cause.message;
  }
  return String(cause);
}
