/**
 * The one client of the console API: same-origin fetch with the session cookie, JSON both ways,
 * the CSRF token on every state-changing call, and errors as ConsoleApiError carrying the
 * envelope's status, type and message.
 */
import type { ErrorEnvelope } from './api-types.ts';

export const API_BASE = '/console/api';

/**
 * A new Idempotency-Key. crypto.getRandomValues works on every page; crypto.randomUUID only in a
 * secure context, which a console reached over plain http on a LAN address is not.
 */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export class ConsoleApiError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(status: number, type: string, message: string) {
    super(message);
    this.name = 'ConsoleApiError';
    this.status = status;
    this.type = type;
  }
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined | null>;
  idempotencyKey?: string;
  /** Calls that answer 401 as part of their meaning (sign-in, the session probe) keep the page where it is. */
  redirectOnUnauthenticated?: boolean;
}

let csrfToken: string | null = null;
let unauthenticatedHandler: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called on a 401 from any call: the app sends the user to the sign-in page. */
export function onUnauthenticated(handler: (() => void) | null): void {
  unauthenticatedHandler = handler;
}

export function apiUrl(path: string, query?: RequestOptions['query']): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return `${API_BASE}${path}${text === '' ? '' : `?${text}`}`;
}

function isEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = (value as { error: unknown }).error;
  return typeof error === 'object' && error !== null && 'type' in error && 'message' in error;
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;

  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    throw new ConsoleApiError(0, 'network_error', error instanceof Error ? error.message : String(error));
  }

  const text = await response.text();
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) {
    if (response.status === 401 && options.redirectOnUnauthenticated !== false) unauthenticatedHandler?.();
    if (isEnvelope(parsed)) throw new ConsoleApiError(response.status, parsed.error.type, parsed.error.message);
    throw new ConsoleApiError(response.status, 'http_error', `${response.status} ${response.statusText}`.trim());
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string, query?: RequestOptions['query']) => request<T>('GET', path, { query }),
  post: <T>(path: string, body?: unknown, options: Omit<RequestOptions, 'body'> = {}) => request<T>('POST', path, { ...options, body: body ?? {} }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  delete: (path: string) => request<void>('DELETE', path),
};
