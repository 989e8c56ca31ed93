/**
 * Test harness: real gateways on random loopback ports over real databases. No mocks.
 * SQLite always; PostgreSQL when TMS_TEST_DATABASE_URL is set (CI sets it and requires it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
export { freePort } from '../../../test/ports.ts';
import { parseConfig, type Config } from '../src/config/config.ts';
import { createRuntime, type Runtime } from '../src/main/runtime.ts';
import { startService, type RunningService } from '../src/main/server.ts';

export type StoreKind = 'sqlite' | 'postgres';

const POSTGRES_ADMIN_URL = process.env.TMS_TEST_DATABASE_URL;

if (process.env.CI === 'true' && !POSTGRES_ADMIN_URL) {
  throw new Error('CI requires PostgreSQL: set TMS_TEST_DATABASE_URL (see .ci/run)');
}

/** The stores every store/HTTP suite runs on. */
export const STORE_KINDS: StoreKind[] = POSTGRES_ADMIN_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  kind: StoreKind;
  /** Environment entries that point the gateway at this database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

function databaseUrlFor(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A fresh, empty database: a temp SQLite directory or a new PostgreSQL database. `postgresOptions`
 * is appended to PostgreSQL's CREATE DATABASE (a database made with another locale, say).
 */
export async function createTestDatabase(kind: StoreKind, postgresOptions = ''): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tms-test-'));
    return { kind, env: { TMS_DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (!POSTGRES_ADMIN_URL) throw new Error('TMS_TEST_DATABASE_URL is not set');
  const name = `tms_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} ${postgresOptions}`);
  await admin.end();
  const dir = mkdtempSync(join(tmpdir(), 'tms-test-'));
  return {
    kind,
    env: { DATABASE_URL: databaseUrlFor(POSTGRES_ADMIN_URL, name), TMS_DATA_DIR: dir },
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Where a test without a platform points the gateway: a port nothing listens on, refused at once. */
const NO_PLATFORM_URL = 'http://127.0.0.1:9';

/** Environment for a gateway on a test database: its own secrets, generous rate limits, quiet logs. */
export function gatewayEnvironment(database: TestDatabase, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    TMS_ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    TMS_MASTER_KEY: randomBytes(32).toString('hex'),
    TMS_RATE_LIMIT_PER_SECOND: '100000',
    TMS_RATE_LIMIT_BURST: '100000',
    TMS_LOG_LEVEL: 'silent',
    TMS_DEMO_SEED: 'false',
    TMS_WEBHOOK_ALLOW_PRIVATE: 'true',
    // A test that gives no platform (ZNS_API_URL) has none: the gateway must not ask the real one
    // for quotas, so it runs with platform quota lookups off (the configured daily_quota applies).
    ...(overrides.ZNS_API_URL === undefined ? { TMS_PLATFORM_QUOTA_CACHE_MS: '0', ZNS_API_URL: NO_PLATFORM_URL } : {}),
    ...(overrides.ZNS_OAUTH_URL === undefined ? { ZNS_OAUTH_URL: NO_PLATFORM_URL } : {}),
    ...database.env,
    ...overrides,
  };
}

export interface TestGateway {
  url: string;
  config: Config;
  runtime: Runtime;
  service: RunningService;
  database: TestDatabase;
  /** Calls the gateway's HTTP API. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Calls /admin/v1 with the operator token. */
  admin(method: string, path: string, body?: unknown): Promise<TestResponse>;
  /** Stops the gateway and drops its database. */
  close(): Promise<void>;
}

export interface RequestOptions {
  key?: string;
  /** How to present the key: Authorization: Bearer (default) or X-API-Key. */
  keyHeader?: 'bearer' | 'x-api-key';
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function httpRequest(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) {
    if (options.keyHeader === 'x-api-key') headers['x-api-key'] = options.key;
    else headers.authorization = `Bearer ${options.key}`;
  }
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Longer than any graceful stop of a test gateway, and shorter than a test hook's time limit. */
const STOP_REPORT_AFTER_MS = 45_000;
/** The gateway's last warning and error lines kept for that report. */
const KEPT_LOG_LINES = 40;

/** A gateway's warnings and errors, kept in memory and shown only when its stop hangs. */
function keptLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (line: string): void => {
    lines.push(line.trimEnd());
    if (lines.length > KEPT_LOG_LINES) lines.shift();
  };
  return { log: pino({ level: 'warn' }, { write: keep }), lines };
}

/** Starts an in-process gateway (API, no workers unless asked) on a fresh database. */
export async function startTestGateway(
  kind: StoreKind,
  options: { env?: Record<string, string>; worker?: boolean; clock?: () => number; postgresDatabaseOptions?: string } = {},
): Promise<TestGateway> {
  const database = await createTestDatabase(kind, options.postgresDatabaseOptions);
  const config = parseConfig(gatewayEnvironment(database, options.env));
  const { log, lines } = keptLog();
  const runtime = await createRuntime(config, { log, clock: options.clock });
  const service = await startService(runtime, { api: true, worker: options.worker ?? false });
  const url = service.url!;
  return {
    url,
    config,
    runtime,
    service,
    database,
    request: (method, path, requestOptions) => httpRequest(url, method, path, requestOptions),
    admin: (method, path, body) => httpRequest(url, method, `/admin/v1${path}`, { key: config.adminToken!, body }),
    close: async () => {
      // A stop that hangs fails here with the gateway's own account (its "still stopping" lines
      // name what it waits for), not later as a bare hook timeout.
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`the test gateway did not stop within ${STOP_REPORT_AFTER_MS} ms; its last warnings:\n${lines.join('\n')}`)), STOP_REPORT_AFTER_MS);
      });
      try {
        await Promise.race([service.stop(), hung]);
      } finally {
        clearTimeout(timer);
      }
      await database.drop();
    },
  };
}

export const SCOPES_ALL = ['messages:send', 'messages:read', 'templates:read'];

export interface SeededWorkspace {
  workspaceId: string;
  apiKey: string;
  apiKeyId: string;
  oaId: string;
  /** ENABLE template with params name (1..30, required) and code (1..10, required), price 300. */
  templateId: string;
}

let seedCounter = 0;

/** A workspace with a wallet, a sender account, one ENABLE template and a key, via /admin/v1. */
export async function seedWorkspace(
  gateway: TestGateway,
  options: { balance?: number; messageCap?: number | null; dailyQuota?: number; price?: number; scopes?: string[]; name?: string } = {},
): Promise<SeededWorkspace> {
  seedCounter += 1;
  const suffix = `${process.pid}${seedCounter}${randomBytes(3).toString('hex')}`;
  const expectOk = (response: TestResponse, what: string): TestResponse => {
    if (response.status >= 300) throw new Error(`${what} failed: ${response.status} ${response.text}`);
    return response;
  };
  const workspace = expectOk(
    await gateway.admin('POST', '/workspaces', { name: options.name ?? `workspace ${suffix}`, message_cap: options.messageCap ?? null }),
    'create workspace',
  ).body;
  if ((options.balance ?? 1_000_000) > 0) {
    expectOk(await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: options.balance ?? 1_000_000 }), 'top up');
  }
  const oaId = `oa${suffix}`;
  expectOk(
    await gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, {
      name: `OA ${suffix}`,
      daily_quota: options.dailyQuota ?? 100_000,
      app_id: `app${suffix}`,
      app_secret: 'app-secret',
      refresh_token: 'refresh-token',
    }),
    'connect sender account',
  );
  const templateId = `tpl${suffix}`;
  expectOk(
    await gateway.admin('PUT', `/workspaces/${workspace.id}/templates/${templateId}?verify=false`, {
      name: 'Order confirmation',
      status: 'ENABLE',
      template_type: 1,
      oa_id: oaId,
      preview_url: 'https://example.com/preview',
      price: options.price ?? 300,
      params: [
        { name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
        { name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 },
      ],
    }),
    'register template',
  );
  const key = expectOk(await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: options.scopes ?? SCOPES_ALL }), 'create key').body;
  return { workspaceId: workspace.id, apiKey: key.key, apiKeyId: key.id, oaId, templateId };
}

/** template_data that fits the seeded template. */
export const VALID_DATA = { name: 'Nguyễn Văn A', code: 'A123' };

