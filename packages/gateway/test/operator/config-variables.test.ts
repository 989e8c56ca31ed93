/**
 * Every configuration variable (README, Configuration), one by one: a good value reaches the
 * Config the gateway runs with, an empty one means unset, and a bad one stops start-up with a
 * message naming the variable.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/config.ts';
import { configErrorOf } from './config-refusal.ts';
import { CONFIG_VARIABLES, type VariableName } from '../../src/config/variables.ts';

const ADMIN_TOKEN = 'operator-token-0123456789';
const MASTER_KEY_HEX = 'ab'.repeat(32);
const SECRETS = { TMS_ADMIN_TOKEN: ADMIN_TOKEN, TMS_MASTER_KEY: MASTER_KEY_HEX };
const POSTGRES = { DATABASE_URL: 'postgres://tms@db.internal:5432/tms', ...SECRETS };

interface VariableCase {
  /** A value different from the default, where it lands in the Config, and as what. */
  readonly value: string;
  readonly read: (config: Config) => unknown;
  readonly expected: unknown;
  /** A value start-up refuses; null when every value is taken as given. */
  readonly bad: string | null;
  /** The refused value may be secret, so the message must not repeat it. */
  readonly secret?: boolean;
  /** Other variables the value is only read or accepted with. */
  readonly with?: Record<string, string>;
}

const CASES: Record<VariableName, VariableCase> = {
  DATABASE_URL: {
    value: 'postgresql://tms:pw@db.internal:5432/tms',
    with: SECRETS,
    read: (config) => config.database,
    expected: { kind: 'postgres', url: 'postgresql://tms:pw@db.internal:5432/tms', poolSize: 10, preparedStatements: true },
    bad: 'mysql://tms:pw@db.internal/tms',
    secret: true,
  },
  TMS_DATA_DIR: {
    value: 'var/tms-data',
    read: (config) => [config.dataDir, config.database],
    expected: [resolve('var/tms-data'), { kind: 'sqlite', file: resolve('var/tms-data/tms.sqlite') }],
    bad: null,
  },
  HOST: { value: '0.0.0.0', read: (config) => config.host, expected: '0.0.0.0', bad: null },
  PORT: { value: '8080', read: (config) => config.port, expected: 8080, bad: '80.5' },
  TMS_ADMIN_TOKEN: { value: ADMIN_TOKEN, read: (config) => config.adminToken, expected: ADMIN_TOKEN, bad: 'fifteen-chars!!', secret: true },
  TMS_MASTER_KEY: {
    value: Buffer.alloc(32, 7).toString('base64'),
    read: (config) => config.masterKey,
    expected: Buffer.alloc(32, 7),
    bad: 'cd'.repeat(31),
    secret: true,
  },
  TMS_MASTER_KEY_PREVIOUS: {
    value: 'ef'.repeat(32),
    read: (config) => config.previousMasterKey,
    expected: Buffer.alloc(32, 0xef),
    bad: 'too-short',
    secret: true,
  },
  TMS_MASTER_KEY_LOST_IDS: { value: '0123456789ABCDEF, legacy', read: (config) => config.lostMasterKeyIds, expected: ['0123456789abcdef', 'legacy'], bad: '0123' },
  TMS_RATE_LIMIT_PER_SECOND: { value: '200', read: (config) => config.rateLimit.perSecond, expected: 200, bad: '0' },
  TMS_RATE_LIMIT_BURST: { value: '400', read: (config) => config.rateLimit.burst, expected: 400, bad: '1e3' },
  TMS_AUTH_CACHE_MS: { value: '0', read: (config) => config.authCacheMs, expected: 0, bad: '5001' },
  TMS_PG_POOL_SIZE: { value: '25', with: POSTGRES, read: (config) => config.database, expected: { kind: 'postgres', url: POSTGRES.DATABASE_URL, poolSize: 25, preparedStatements: true }, bad: '201' },
  TMS_PG_PREPARED_STATEMENTS: { value: 'false', with: POSTGRES, read: (config) => config.database, expected: { kind: 'postgres', url: POSTGRES.DATABASE_URL, poolSize: 10, preparedStatements: false }, bad: 'sometimes' },
  TMS_LOG_LEVEL: { value: 'debug', read: (config) => config.logLevel, expected: 'debug', bad: 'verbose' },
  TMS_ACCESS_LOG: { value: 'on', read: (config) => config.accessLog, expected: true, bad: 'loud' },
  TMS_WORKER_THREAD: { value: 'false', read: (config) => config.workerThread, expected: false, bad: 'sometimes' },
  TMS_WORKER_THREAD_HEAP_MB: { value: '128', read: (config) => config.workerThreadHeapMb, expected: 128, bad: '-1' },
  TMS_HEAP_GROWTH_PERCENT: { value: '0', read: (config) => config.heapGrowthPercent, expected: 0, bad: '1001' },
  TMS_DEMO_SEED: { value: 'NO', read: (config) => config.demoSeed, expected: false, bad: 'maybe' },
  TMS_WEBHOOK_ALLOW_PRIVATE: { value: '1', read: (config) => config.allowPrivateWebhookTargets, expected: true, bad: '2' },
  TMS_WEBHOOK_RETRY_DELAYS_MS: { value: ' 10, 20 ,30', read: (config) => config.webhooks.retryDelaysMs, expected: [10, 20, 30], bad: '1000;5000' },
  TMS_WEBHOOK_TIMEOUT_MS: { value: '60000', read: (config) => config.webhooks.timeoutMs, expected: 60_000, bad: '99' },
  TMS_WEBHOOK_CONCURRENCY: { value: '20', read: (config) => config.webhooks.concurrency, expected: 20, bad: 'many' },
  TMS_WEBHOOK_RECEIVER_CONCURRENCY: { value: '2', read: (config) => config.webhooks.receiverConcurrency, expected: 2, bad: '10001' },
  TMS_WEBHOOK_LEASE_MS: { value: '40000', read: (config) => config.webhooks.leaseMs, expected: 40_000, bad: '3600001' },
  TMS_WEBHOOK_BATCH_SIZE: { value: '50', read: (config) => config.webhooks.batchSize, expected: 50, bad: '5001' },
  TMS_WEBHOOK_POLL_MS: { value: '20', read: (config) => config.webhooks.idlePollMs, expected: 20, bad: '9' },
  TMS_WEBHOOK_RETENTION_DAYS: { value: '7', read: (config) => config.webhooks.retentionDays, expected: 7, bad: '0' },
  TMS_MESSAGE_RETENTION_DAYS: { value: '0', read: (config) => config.messageRetentionDays, expected: 0, bad: 'off' },
  TMS_TRUST_PROXY: { value: 'true', read: (config) => config.trustProxy, expected: true, bad: 'maybe' },
  TMS_PUBLIC_URL: { value: 'https://tms.example.vn/', read: (config) => config.console.publicUrl, expected: 'https://tms.example.vn', bad: 'ftp://tms.example.vn' },
  TMS_CONSOLE_SESSION_IDLE_MINUTES: { value: '15', read: (config) => config.console.sessionIdleMs, expected: 15 * 60_000, bad: '0' },
  TMS_CONSOLE_SESSION_HOURS: { value: '8', read: (config) => config.console.sessionMaxMs, expected: 8 * 3_600_000, bad: '721' },
  TMS_CONSOLE_INVITATION_HOURS: { value: '24', read: (config) => config.console.invitationMs, expected: 24 * 3_600_000, bad: 'soon' },
  ZNS_OAUTH_URL: { value: 'http://127.0.0.1:8090/', read: (config) => config.zns.oauthBaseUrl, expected: 'http://127.0.0.1:8090', bad: 'ftp://oauth.example' },
  ZNS_API_URL: { value: 'https://zns.example//', read: (config) => config.zns.apiBaseUrl, expected: 'https://zns.example', bad: 'zns.example' },
  ZNS_TIMEOUT_MS: { value: '2500', read: (config) => config.zns.timeoutMs, expected: 2500, bad: '120001' },
  ZNS_CONNECTIONS: { value: '16', read: (config) => config.zns.connections, expected: 16, bad: '0' },
  TMS_DISPATCH_BATCH_SIZE: { value: '100', read: (config) => config.dispatch.batchSize, expected: 100, bad: '-1' },
  TMS_DISPATCH_PARALLEL_ROUNDS: { value: '8', read: (config) => config.dispatch.parallelRounds, expected: 8, bad: '65' },
  TMS_DISPATCH_ACCOUNT_CONCURRENCY: { value: '50', read: (config) => config.dispatch.perAccountConcurrency, expected: 50, bad: 'all' },
  TMS_DISPATCH_LEASE_MS: { value: '5000', read: (config) => config.dispatch.leaseMs, expected: 5000, bad: '999' },
  TMS_DISPATCH_BACKOFF_MS: { value: '10', read: (config) => config.dispatch.backoffBaseMs, expected: 10, bad: '0' },
  TMS_DISPATCH_POLL_MS: { value: '50', read: (config) => config.dispatch.idlePollMs, expected: 50, bad: '60001' },
  TMS_DISPATCH_UNCONFIRMED_GRACE_MS: { value: '0', read: (config) => config.dispatch.unconfirmedGraceMs, expected: 0, bad: '86400001' },
  TMS_TEMPLATE_SYNC_MS: { value: '0', read: (config) => config.templateSyncMs, expected: 0, bad: '15m' },
  TMS_DELIVERY_CHECK_AFTER_MS: { value: '60000', read: (config) => config.deliveryCheckAfterMs, expected: 60_000, bad: '86400001' },
  TMS_PLATFORM_QUOTA_CACHE_MS: { value: '0', read: (config) => config.platformQuota.cacheMs, expected: 0, bad: '3600001' },
  TMS_PLATFORM_QUOTA_RETRY_MS: { value: '1000', read: (config) => config.platformQuota.retryMs, expected: 1000, bad: '99' },
  TMS_HTTP_REQUEST_TIMEOUT_MS: { value: '60000', read: (config) => config.http.requestTimeoutMs, expected: 60_000, bad: '999' },
  TMS_HTTP_HEADERS_TIMEOUT_MS: { value: '20000', read: (config) => config.http.headersTimeoutMs, expected: 20_000, bad: 'ten seconds' },
  TMS_HTTP_KEEP_ALIVE_TIMEOUT_MS: { value: '5000', read: (config) => config.http.keepAliveTimeoutMs, expected: 5000, bad: '600001' },
};

const NAMES = Object.keys(CASES) as VariableName[];
const REFUSABLE = NAMES.filter((name) => CASES[name].bad !== null);

describe('every configuration variable', () => {
  it('has a case here, and only the variables start-up reads do', () => {
    expect([...NAMES].sort()).toEqual(Object.keys(CONFIG_VARIABLES).sort());
  });

  it.each(NAMES)('%s reaches the Config', (name) => {
    const { value, read, expected, with: context = {} } = CASES[name];
    expect(read(parseConfig({ ...context, [name]: value }))).toEqual(expected);
    expect(read(parseConfig(context))).not.toEqual(expected);
  });

  it.each(NAMES)('%s set to an empty string means unset', (name) => {
    const context = CASES[name].with ?? {};
    expect(parseConfig({ ...context, [name]: '' })).toEqual(parseConfig(context));
  });

  it.each(REFUSABLE)('%s refuses a bad value with a message naming it', (name) => {
    const { bad, secret, with: context = {} } = CASES[name];
    const error = configErrorOf({ ...context, [name]: bad! });
    expect(error.variable).toBe(name);
    expect(error.message).toMatch(new RegExp(`^Invalid configuration: ${name} must `));
    if (secret) expect(error.message).not.toContain(bad);
    else expect(error.message).toContain(bad);
  });

  it('takes any text for HOST and TMS_DATA_DIR', () => {
    expect(NAMES.filter((name) => CASES[name].bad === null)).toEqual(['TMS_DATA_DIR', 'HOST']);
    expect(parseConfig({ HOST: 'gateway.internal', TMS_DATA_DIR: '/srv/tms data' })).toMatchObject({ host: 'gateway.internal', dataDir: '/srv/tms data' });
  });
});
