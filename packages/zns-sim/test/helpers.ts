// Shared helpers for the simulator tests: real HTTP against a started simulator, no mocks.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { DEMO_SEED_PATH, startSimulator, type RunningSimulator, type Seed, type SimulatorOptions } from '../src/index.ts';

export const OA_ID = '4318269720189301001';
export const APP_ID = '2074138120372622001';
export const APP_SECRET = 'demo-app-secret-change-me';
export const OA_SECRET_KEY = 'demo-oa-secret-key-change-me';
export const REFRESH_TOKEN = 'demo-refresh-token-0001';

export function demoSeed(): Seed {
  return JSON.parse(readFileSync(DEMO_SEED_PATH, 'utf8')) as Seed;
}

/** Starts the demo seed with events off (unless given) so tests never post to a real port 3000. */
export function start(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startSimulator({ eventsUrl: null, ...options });
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

async function result(res: Response): Promise<HttpResult> {
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON (e.g. an HTML 5xx page)
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function tokenRequest(base: string, form: Record<string, string>, secretKey: string | null = APP_SECRET): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (secretKey !== null) headers.secret_key = secretKey;
  return result(await fetch(`${base}/v4/oa/access_token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() }));
}

export async function refresh(base: string, refreshToken = REFRESH_TOKEN): Promise<HttpResult> {
  return tokenRequest(base, { app_id: APP_ID, grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** Refreshes the demo OA's token and returns the access token. */
export async function accessToken(base: string, refreshToken = REFRESH_TOKEN): Promise<string> {
  const r = await refresh(base, refreshToken);
  if (typeof r.json?.access_token !== 'string') throw new Error(`refresh failed: ${r.text}`);
  return r.json.access_token as string;
}

export async function post(base: string, path: string, token: string | null, body: unknown, extraHeaders: Record<string, string> = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
  if (token !== null) headers.access_token = token;
  return result(await fetch(`${base}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) }));
}

export async function get(base: string, path: string, token: string | null = null): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.access_token = token;
  return result(await fetch(`${base}${path}`, { headers }));
}

export async function control(base: string, method: string, path: string, body?: unknown): Promise<HttpResult> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  return result(await fetch(`${base}/_control${path}`, init));
}

export function otpSend(phone = '84987654321', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { phone, template_id: '250002', template_data: { otp: '123456' }, tracking_id: `t-${Math.random().toString(36).slice(2)}`, ...extra };
}

export interface ReceivedEvent {
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
  status: number;
}

export interface EventReceiver {
  url: string;
  events: ReceivedEvent[];
  /** Decides the HTTP status for the n-th request (0-based). Default: always 200. */
  respond: (n: number) => number;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  close(): Promise<void>;
}

/** A plain node:http server that records every event POST. */
export async function eventReceiver(): Promise<EventReceiver> {
  const events: ReceivedEvent[] = [];
  const receiver: EventReceiver = {
    url: '',
    events,
    respond: () => 200,
    async waitFor(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (events.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} events, got ${events.length}`);
        await sleep(20);
      }
      return events;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const status = receiver.respond(events.length);
      events.push({ headers: req.headers, raw, body: JSON.parse(raw), status });
      res.statusCode = status;
      res.end(status === 200 ? '{"ok":true}' : 'nope');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const addr = server.address();
  receiver.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/platform/zns/events`;
  return receiver;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms (last value ${JSON.stringify(v)})`);
    await sleep(20);
  }
}
