import { resolve } from 'node:path';
import { ConfigError } from './config-error.ts';
import { CROSS_FIELD_RULES } from './cross-field-rules.ts';
import { readVariable, type Environment } from './read-variable.ts';
import { CONFIG_VARIABLES, HOUR_MS, MINUTE_MS, VARIABLE_NAMES, type VariableValues } from './variables.ts';

export { ConfigError } from './config-error.ts';
export { parseMasterKey } from './master-key.ts';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string }
  | {
      kind: 'postgres';
      url: string;
      poolSize: number;
      /** Whether repeated statements are prepared by name on each connection (true when absent). */
      preparedStatements?: boolean;
    };

export interface Config {
  readonly database: DatabaseConfig;
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  /** Null in embedded mode until resolved from the data directory (see secrets.ts). */
  readonly adminToken: string | null;
  readonly masterKey: Buffer | null;
  /** During a rotation: a key secrets are still read under, never encrypted with. */
  readonly previousMasterKey: Buffer | null;
  /** The secrets file the master key was read from (embedded mode without TMS_MASTER_KEY), else null. */
  readonly masterKeyFile: string | null;
  /** Ids of master keys the operator declared lost (TMS_MASTER_KEY_LOST_IDS): their secrets do not stop a start. */
  readonly lostMasterKeyIds: readonly string[];
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  /** How long an API key lookup is cached; revocation must reach every node within 5 s. */
  readonly authCacheMs: number;
  readonly logLevel: string;
  readonly accessLog: boolean;
  /** `tms start`: the workers in a second thread (true) or on the API's event loop. */
  readonly workerThread: boolean;
  /** The workers' thread's old-generation heap limit in MB; 0 leaves V8's own. */
  readonly workerThreadHeapMb: number;
  /** How far a heap may grow past its last full collection's survivors, in percent; 0 leaves V8's own rule. */
  readonly heapGrowthPercent: number;
  readonly demoSeed: boolean;
  readonly allowPrivateWebhookTargets: boolean;
  /** Behind a reverse proxy: the client's address and protocol come from its X-Forwarded-* headers. */
  readonly trustProxy: boolean;
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
  /** Days after a message finished before its phone and template data are erased; 0 keeps them forever. */
  readonly messageRetentionDays: number;
  /**
   * The platform's daily quota per sender account (GET /quota, batch acceptance): how long a lookup
   * is cached in each process (0: never ask the platform, use the configured daily_quota), and how
   * long a failed lookup is remembered before the platform is asked again.
   */
  readonly platformQuota: { readonly cacheMs: number; readonly retryMs: number };
  /** The customers' console: where people reach it (null: the listen address), session and invitation lifetimes. */
  readonly console: ConsoleSettings;
}

export interface ConsoleSettings {
  readonly publicUrl: string | null;
  readonly sessionIdleMs: number;
  readonly sessionMaxMs: number;
  readonly invitationMs: number;
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

/** Reads every variable of the schema (variables.ts), then checks the rules that join two of them. */
function readVariableValues(env: Environment): VariableValues {
  const values: Partial<Record<string, unknown>> = {};
  for (const name of VARIABLE_NAMES) values[name] = readVariable(name, CONFIG_VARIABLES[name], env);
  const checked = values as VariableValues;
  for (const rule of CROSS_FIELD_RULES) {
    const problem = rule.problem(checked);
    if (problem !== null) throw new ConfigError(rule.variable, problem);
  }
  return checked;
}

/** Parses the environment once. Nothing else in the gateway reads process.env. */
export function parseConfig(env: Environment = process.env): Config {
  const values = readVariableValues(env);
  const dataDir = values.TMS_DATA_DIR;
  const database: DatabaseConfig =
    values.DATABASE_URL === null
      ? { kind: 'sqlite', file: resolve(dataDir, 'tms.sqlite') }
      : { kind: 'postgres', url: values.DATABASE_URL, poolSize: values.TMS_PG_POOL_SIZE, preparedStatements: values.TMS_PG_PREPARED_STATEMENTS };
  return Object.freeze({
    database,
    dataDir,
    host: values.HOST,
    port: values.PORT,
    adminToken: values.TMS_ADMIN_TOKEN,
    masterKey: values.TMS_MASTER_KEY,
    previousMasterKey: values.TMS_MASTER_KEY_PREVIOUS,
    masterKeyFile: null,
    lostMasterKeyIds: values.TMS_MASTER_KEY_LOST_IDS,
    rateLimit: Object.freeze({ perSecond: values.TMS_RATE_LIMIT_PER_SECOND, burst: values.TMS_RATE_LIMIT_BURST }),
    authCacheMs: values.TMS_AUTH_CACHE_MS,
    logLevel: values.TMS_LOG_LEVEL,
    accessLog: values.TMS_ACCESS_LOG,
    workerThread: values.TMS_WORKER_THREAD,
    workerThreadHeapMb: values.TMS_WORKER_THREAD_HEAP_MB,
    heapGrowthPercent: values.TMS_HEAP_GROWTH_PERCENT,
    demoSeed: values.TMS_DEMO_SEED,
    allowPrivateWebhookTargets: values.TMS_WEBHOOK_ALLOW_PRIVATE,
    trustProxy: values.TMS_TRUST_PROXY,
    http: Object.freeze({
      requestTimeoutMs: values.TMS_HTTP_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: values.TMS_HTTP_HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: values.TMS_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    }),
    webhooks: Object.freeze({
      retryDelaysMs: values.TMS_WEBHOOK_RETRY_DELAYS_MS,
      timeoutMs: values.TMS_WEBHOOK_TIMEOUT_MS,
      concurrency: values.TMS_WEBHOOK_CONCURRENCY,
      receiverConcurrency: values.TMS_WEBHOOK_RECEIVER_CONCURRENCY,
      leaseMs: values.TMS_WEBHOOK_LEASE_MS,
      batchSize: values.TMS_WEBHOOK_BATCH_SIZE,
      idlePollMs: values.TMS_WEBHOOK_POLL_MS,
      retentionDays: values.TMS_WEBHOOK_RETENTION_DAYS,
    }),
    zns: Object.freeze({
      oauthBaseUrl: values.ZNS_OAUTH_URL,
      apiBaseUrl: values.ZNS_API_URL,
      timeoutMs: values.ZNS_TIMEOUT_MS,
      connections: values.ZNS_CONNECTIONS,
    }),
    dispatch: Object.freeze({
      batchSize: values.TMS_DISPATCH_BATCH_SIZE,
      parallelRounds: values.TMS_DISPATCH_PARALLEL_ROUNDS,
      perAccountConcurrency: values.TMS_DISPATCH_ACCOUNT_CONCURRENCY,
      leaseMs: values.TMS_DISPATCH_LEASE_MS,
      backoffBaseMs: values.TMS_DISPATCH_BACKOFF_MS,
      idlePollMs: values.TMS_DISPATCH_POLL_MS,
      unconfirmedGraceMs: values.TMS_DISPATCH_UNCONFIRMED_GRACE_MS,
    }),
    templateSyncMs: values.TMS_TEMPLATE_SYNC_MS,
    deliveryCheckAfterMs: values.TMS_DELIVERY_CHECK_AFTER_MS,
    messageRetentionDays: values.TMS_MESSAGE_RETENTION_DAYS,
    platformQuota: Object.freeze({ cacheMs: values.TMS_PLATFORM_QUOTA_CACHE_MS, retryMs: values.TMS_PLATFORM_QUOTA_RETRY_MS }),
    console: Object.freeze({
      publicUrl: values.TMS_PUBLIC_URL === '' ? null : values.TMS_PUBLIC_URL,
      sessionIdleMs: values.TMS_CONSOLE_SESSION_IDLE_MINUTES * MINUTE_MS,
      sessionMaxMs: values.TMS_CONSOLE_SESSION_HOURS * HOUR_MS,
      invitationMs: values.TMS_CONSOLE_INVITATION_HOURS * HOUR_MS,
    }),
  });
}
