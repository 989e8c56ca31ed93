import { resolve } from 'node:path';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string; poolSize: number };

export interface Config {
  readonly database: DatabaseConfig;
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  /** Null in embedded mode until resolved from the data directory (see secrets.ts). */
  readonly adminToken: string | null;
  readonly masterKey: Buffer | null;
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  /** How long an API key lookup is cached; revocation must reach every node within 5 s. */
  readonly authCacheMs: number;
  readonly logLevel: string;
  readonly accessLog: boolean;
  readonly demoSeed: boolean;
  readonly allowPrivateWebhookTargets: boolean;
  /** Limits on slow clients: the whole request, its headers, and an idle keep-alive connection. */
  readonly http: { readonly requestTimeoutMs: number; readonly headersTimeoutMs: number; readonly keepAliveTimeoutMs: number };
  /** The delivery-report webhook sender. */
  readonly webhooks: WebhookSettings;
  /** The ZNS platform: OAuth host, business API host, deadline of each call, keep-alive connections per host. */
  readonly zns: { readonly oauthBaseUrl: string; readonly apiBaseUrl: string; readonly timeoutMs: number; readonly connections: number };
  readonly dispatch: {
    readonly batchSize: number;
    readonly parallelRounds: number;
    readonly perAccountConcurrency: number;
    readonly leaseMs: number;
    readonly backoffBaseMs: number;
    readonly idlePollMs: number;
    /** How long a dead worker's unconfirmed send waits for a delivery event before it is sent again. */
    readonly unconfirmedGraceMs: number;
  };
  /** How often a worker syncs every workspace's templates from the platform; 0 disables it. */
  readonly templateSyncMs: number;
  /** When a sent message's delivery event counts as overdue and the platform's status endpoint is asked; 0 disables. */
  readonly deliveryCheckAfterMs: number;
  /**
   * The platform's daily quota per sender account (GET /quota, batch acceptance): how long a lookup
   * is cached in each process (0: never ask the platform, use the configured daily_quota), and how
   * long a failed lookup is remembered before the platform is asked again.
   */
  readonly platformQuota: { readonly cacheMs: number; readonly retryMs: number };
}

export interface WebhookSettings {
  /** Delay before each retry, counted from the end of the failed attempt; one entry per retry (contract: 5). */
  readonly retryDelaysMs: readonly number[];
  /** Whole-attempt limit: connect, send, answer (contract: 30 s). */
  readonly timeoutMs: number;
  /** Deliveries a worker process holds at once (claimed, in flight or being recorded). */
  readonly concurrency: number;
  /** Requests in flight per receiver (scheme, host and port) per process, over as many keep-alive connections. */
  readonly receiverConcurrency: number;
  /** How long a claim is held; a dead worker's deliveries are attempted again after it. */
  readonly leaseMs: number;
  /** Most deliveries claimed in one statement. */
  readonly batchSize: number;
  /** Pause when nothing is due. */
  readonly idlePollMs: number;
  /** Finished reports (delivered, failed, cancelled) and their attempt logs are deleted after this many days. */
  readonly retentionDays: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Environment = Record<string, string | undefined>;

function readInteger(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A comma-separated list of whole milliseconds, e.g. "1000,5000,30000,120000,600000". */
function readDelayList(env: Environment, name: string, fallback: readonly number[]): readonly number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return Object.freeze([...fallback]);
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 20 || parts.some((part) => !/^\d+$/.test(part) || Number(part) > 86_400_000)) {
    throw new ConfigError(name, `must be 1 to 20 comma-separated whole numbers of milliseconds (at most 86400000 each), got "${raw}"`);
  }
  return Object.freeze(parts.map(Number));
}

function readWebhookSettings(env: Environment): WebhookSettings {
  const timeoutMs = readInteger(env, 'TMS_WEBHOOK_TIMEOUT_MS', 30_000, 100, 120_000);
  const leaseMs = readInteger(env, 'TMS_WEBHOOK_LEASE_MS', 120_000, 1000, 3_600_000);
  // A claim must outlive the attempt it covers and its recording, or a live worker's delivery could be taken by another.
  if (leaseMs < timeoutMs + 2000) throw new ConfigError('TMS_WEBHOOK_LEASE_MS', `must be at least TMS_WEBHOOK_TIMEOUT_MS + 2000 (${timeoutMs + 2000}), got ${leaseMs}`);
  return Object.freeze({
    retryDelaysMs: readDelayList(env, 'TMS_WEBHOOK_RETRY_DELAYS_MS', [1000, 5000, 30_000, 120_000, 600_000]),
    timeoutMs,
    concurrency: readInteger(env, 'TMS_WEBHOOK_CONCURRENCY', 1000, 1, 100_000),
    receiverConcurrency: readInteger(env, 'TMS_WEBHOOK_RECEIVER_CONCURRENCY', 64, 1, 10_000),
    leaseMs,
    batchSize: readInteger(env, 'TMS_WEBHOOK_BATCH_SIZE', 500, 1, 5000),
    idlePollMs: readInteger(env, 'TMS_WEBHOOK_POLL_MS', 250, 10, 60_000),
    retentionDays: readInteger(env, 'TMS_WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
  });
}

function readHttpTimeouts(env: Environment): Config['http'] {
  const requestTimeoutMs = readInteger(env, 'TMS_HTTP_REQUEST_TIMEOUT_MS', 30_000, 1000, 600_000);
  const headersTimeoutMs = readInteger(env, 'TMS_HTTP_HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000);
  // Node requires the headers to arrive before the whole request is due.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError('TMS_HTTP_HEADERS_TIMEOUT_MS', `must not exceed TMS_HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`);
  }
  return Object.freeze({
    requestTimeoutMs,
    headersTimeoutMs,
    // Above the 60 s idle timeout of common load balancers, so they never reuse a connection we just closed.
    keepAliveTimeoutMs: readInteger(env, 'TMS_HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 600_000),
  });
}

function readBoolean(env: Environment, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** Accepts 32 bytes as 64 hex characters or as base64. */
export function parseMasterKey(raw: string, name = 'TMS_MASTER_KEY'): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(name, 'must be 32 bytes, as 64 hex characters or base64');
  return key;
}

function readUrl(env: Environment, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function readAdminToken(env: Environment): string | null {
  const token = env.TMS_ADMIN_TOKEN;
  if (token === undefined || token === '') return null;
  if (token.length < 16) throw new ConfigError('TMS_ADMIN_TOKEN', 'must be at least 16 characters');
  return token;
}

function readDatabase(env: Environment, dataDir: string): DatabaseConfig {
  const url = env.DATABASE_URL;
  if (url === undefined || url === '') return { kind: 'sqlite', file: resolve(dataDir, 'tms.sqlite') };
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  return { kind: 'postgres', url, poolSize: readInteger(env, 'TMS_PG_POOL_SIZE', 10, 1, 200) };
}

/** Parses the environment once. Nothing else in the gateway reads process.env. */
export function parseConfig(env: Environment = process.env): Config {
  const dataDir = resolve(env.TMS_DATA_DIR || '.tms');
  const database = readDatabase(env, dataDir);
  const adminToken = readAdminToken(env);
  const masterKey = env.TMS_MASTER_KEY ? parseMasterKey(env.TMS_MASTER_KEY) : null;
  if (database.kind === 'postgres') {
    // Several processes share one PostgreSQL database, so their secrets cannot be generated per node.
    if (!adminToken) throw new ConfigError('TMS_ADMIN_TOKEN', 'is required when DATABASE_URL is set');
    if (!masterKey) throw new ConfigError('TMS_MASTER_KEY', 'is required when DATABASE_URL is set');
  }
  const logLevel = env.TMS_LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('TMS_LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent; got "${logLevel}"`);
  }
  return Object.freeze({
    database,
    dataDir,
    host: env.HOST || '127.0.0.1',
    port: readInteger(env, 'PORT', 3000, 0, 65535),
    adminToken,
    masterKey,
    rateLimit: Object.freeze({
      perSecond: readInteger(env, 'TMS_RATE_LIMIT_PER_SECOND', 50, 1, 1_000_000),
      burst: readInteger(env, 'TMS_RATE_LIMIT_BURST', 100, 1, 1_000_000),
    }),
    authCacheMs: readInteger(env, 'TMS_AUTH_CACHE_MS', 2000, 0, 5000),
    logLevel,
    accessLog: readBoolean(env, 'TMS_ACCESS_LOG', false),
    demoSeed: readBoolean(env, 'TMS_DEMO_SEED', true),
    allowPrivateWebhookTargets: readBoolean(env, 'TMS_WEBHOOK_ALLOW_PRIVATE', false),
    http: readHttpTimeouts(env),
    webhooks: readWebhookSettings(env),
    zns: Object.freeze({
      oauthBaseUrl: readUrl(env, 'ZNS_OAUTH_URL', 'https://oauth.zaloapp.com'),
      apiBaseUrl: readUrl(env, 'ZNS_API_URL', 'https://business.openapi.zalo.me'),
      timeoutMs: readInteger(env, 'ZNS_TIMEOUT_MS', 10_000, 100, 120_000),
      connections: readInteger(env, 'ZNS_CONNECTIONS', 512, 1, 10_000),
    }),
    dispatch: Object.freeze({
      batchSize: readInteger(env, 'TMS_DISPATCH_BATCH_SIZE', 500, 1, 5000),
      parallelRounds: readInteger(env, 'TMS_DISPATCH_PARALLEL_ROUNDS', 4, 1, 64),
      perAccountConcurrency: readInteger(env, 'TMS_DISPATCH_ACCOUNT_CONCURRENCY', 200, 1, 5000),
      leaseMs: readInteger(env, 'TMS_DISPATCH_LEASE_MS', 60_000, 1000, 3_600_000),
      backoffBaseMs: readInteger(env, 'TMS_DISPATCH_BACKOFF_MS', 1000, 1, 600_000),
      idlePollMs: readInteger(env, 'TMS_DISPATCH_POLL_MS', 250, 10, 60_000),
      unconfirmedGraceMs: readInteger(env, 'TMS_DISPATCH_UNCONFIRMED_GRACE_MS', 300_000, 0, 86_400_000),
    }),
    templateSyncMs: readInteger(env, 'TMS_TEMPLATE_SYNC_MS', 15 * 60_000, 0, 7 * 24 * 3_600_000),
    deliveryCheckAfterMs: readInteger(env, 'TMS_DELIVERY_CHECK_AFTER_MS', 15 * 60_000, 0, 24 * 3_600_000),
    platformQuota: Object.freeze({
      cacheMs: readInteger(env, 'TMS_PLATFORM_QUOTA_CACHE_MS', 30_000, 0, 3_600_000),
      retryMs: readInteger(env, 'TMS_PLATFORM_QUOTA_RETRY_MS', 5_000, 100, 600_000),
    }),
  });
}
