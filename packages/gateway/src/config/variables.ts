/**
 * Every environment variable the gateway reads: the single source of parsing, defaults, limits
 * and the README's configuration table (`npm run docs:config`). Rules that join two variables
 * are in cross-field-rules.ts; the Config built from these values is in config.ts.
 */
import type { ValueOf, Variable } from './variable-kinds.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

export const CONFIG_VARIABLES = {
  DATABASE_URL: {
    kind: 'postgresUrl',
    whenUnset: 'unset',
    meaning: '`postgres://…`: use PostgreSQL (many API and worker processes). Unset: embedded SQLite',
  },
  TMS_DATA_DIR: {
    kind: 'directory',
    default: './.tms',
    meaning: 'Embedded database (`tms.sqlite`) and generated secrets (`secrets.json`, mode 0600)',
  },
  HOST: {
    kind: 'text',
    default: '127.0.0.1',
    accepts: 'a host name or IP address',
    meaning: 'Listen address (`0.0.0.0` to serve other machines)',
  },
  PORT: { kind: 'integer', default: 3000, min: 0, max: 65_535, meaning: 'Listen port (`0`: any free port)' },
  TMS_ADMIN_TOKEN: {
    kind: 'secretToken',
    minLength: 16,
    whenUnset: 'generated (embedded)',
    meaning: 'The bootstrap operator token (`/admin/v1`, `/metrics`); give each person and automation a named token (`tms admin operators create`)',
  },
  TMS_MASTER_KEY: {
    kind: 'masterKey',
    whenUnset: 'generated (embedded)',
    meaning: 'Encrypts API keys and ZNS secrets at rest (AES-256-GCM). Keep it: without it stored secrets cannot be read',
  },
  TMS_MASTER_KEY_PREVIOUS: {
    kind: 'masterKey',
    whenUnset: 'unset (embedded: `previousMasterKey` in `secrets.json`, if any)',
    meaning:
      'During a master key rotation only: a second key that stored secrets may be encrypted under. Secrets are read under either key, and encrypted only under `TMS_MASTER_KEY` (see *Rotating the master key*)',
  },
  TMS_MASTER_KEY_LOST_IDS: {
    kind: 'keyIdList',
    whenUnset: 'none',
    meaning:
      "Only after losing a master key: its id, as the processes' refusal to start names it. `tms start`, `tms api` and `tms worker` refuse to start while a stored secret is under a key they do not hold, unless that key is named here; the sender accounts and API keys under it must then be connected and created again (see *Custody of the master key*)",
  },
  TMS_RATE_LIMIT_PER_SECOND: {
    kind: 'integer',
    default: 50,
    min: 1,
    max: 1_000_000,
    meaning: 'Requests per second per API key, per process (N API processes allow N times this). The operator can set a key\'s own limit',
  },
  TMS_RATE_LIMIT_BURST: { kind: 'integer', default: 100, min: 1, max: 1_000_000, meaning: 'Bucket size: requests a key may send at once' },
  TMS_AUTH_CACHE_MS: {
    kind: 'integer',
    default: 2000,
    min: 0,
    // Revocation must reach every node within 5 s.
    max: 5000,
    meaning: 'How long a key lookup is cached. Revocation and suspension reach every node within this time',
  },
  TMS_PG_POOL_SIZE: {
    kind: 'integer',
    default: 10,
    min: 1,
    max: 200,
    onlyWith: 'DATABASE_URL',
    meaning: 'PostgreSQL connections per process',
  },
  TMS_PG_PREPARED_STATEMENTS: {
    kind: 'boolean',
    default: true,
    onlyWith: 'DATABASE_URL',
    meaning:
      "Statements the gateway runs repeatedly are prepared once per connection (named), not parsed and planned on every run: about half of PostgreSQL's CPU per single send. `false` behind a connection pooler that cannot keep prepared statements (PgBouncer in transaction mode before 1.21)",
  },
  TMS_LOG_LEVEL: {
    kind: 'choice',
    default: 'info',
    choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    meaning: 'Least severe level logged. Logs are JSON lines carrying `request_id`',
  },
  TMS_ACCESS_LOG: { kind: 'boolean', default: false, meaning: 'One log line per request (costs CPU at high rates)' },
  TMS_WORKER_THREAD: {
    kind: 'boolean',
    default: true,
    meaning:
      '`tms start` runs the workers (dispatch, webhooks, periodic tasks) in a second thread beside the API, so each has a core. `false`: one event loop for everything (a one-core machine gains nothing from the second thread)',
  },
  TMS_WORKER_THREAD_HEAP_MB: {
    kind: 'integer',
    default: 96,
    min: 0,
    max: 65_536,
    meaning:
      "The workers' thread of `tms start`: the most memory its JavaScript objects may hold (V8's old generation), in MB. Its work is bounded (claims of at most a few thousand messages), so it holds about 40 MB at most; without a limit V8 lets garbage build up to several times that before it collects. A thread that runs out ends the process with exit code 1, and a restart carries on from the store. `0`: V8's own limit, a share of the machine's memory (see *Architecture*, Memory)",
  },
  TMS_HEAP_GROWTH_PERCENT: {
    kind: 'integer',
    default: 30,
    min: 0,
    max: 1_000,
    meaning:
      "`tms start`, `tms api` and `tms worker`: how far each thread's V8 heap may grow past what it held after its last full garbage collection before the next one, in percent. The gateway holds little (about 35 MB in the API's thread), and on a machine with several GB of memory V8 otherwise lets garbage build up to 4 times that. `0`: V8's own rule, about a quarter more memory for a few percent less CPU (see *Architecture*, Memory)",
  },
  TMS_DEMO_SEED: {
    kind: 'boolean',
    default: true,
    meaning: 'Create the demo workspace on a new embedded data directory (never with `DATABASE_URL`)',
  },
  TMS_WEBHOOK_ALLOW_PRIVATE: {
    kind: 'boolean',
    default: false,
    defaultNote: '`true` under `npm start` with the simulator',
    meaning: 'Allow webhook URLs that point at private, loopback, link-local or other non-public (reserved, documentation) addresses (development, tests)',
  },
  TMS_WEBHOOK_RETRY_DELAYS_MS: {
    kind: 'millisecondList',
    default: [1000, 5000, 30_000, 120_000, 600_000],
    maxEntries: 20,
    maxEach: DAY_MS,
    meaning:
      'Delay before each retry of a delivery report, counted from the end of the failed attempt; one entry per retry (the contract\'s five). Shorten it for tests',
  },
  TMS_WEBHOOK_TIMEOUT_MS: {
    kind: 'integer',
    default: 30_000,
    min: 100,
    max: 120_000,
    meaning: 'Whole attempt (connect, send, answer); slower counts as a failed attempt',
  },
  TMS_WEBHOOK_CONCURRENCY: {
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 100_000,
    meaning: 'Delivery reports a worker process holds at once (claimed, in flight or being recorded)',
  },
  TMS_WEBHOOK_RECEIVER_CONCURRENCY: {
    kind: 'integer',
    default: 64,
    min: 1,
    max: 10_000,
    meaning: 'Requests in flight per receiver (scheme, host and port) per worker process, over as many keep-alive connections',
  },
  TMS_WEBHOOK_LEASE_MS: {
    kind: 'integer',
    default: 120_000,
    min: 1000,
    max: HOUR_MS,
    meaning: 'How long a worker\'s claim on a delivery lasts; a dead worker\'s deliveries are attempted again after it',
  },
  TMS_WEBHOOK_BATCH_SIZE: { kind: 'integer', default: 500, min: 1, max: 5000, meaning: 'Delivery reports claimed per statement' },
  TMS_WEBHOOK_POLL_MS: { kind: 'integer', default: 250, min: 10, max: MINUTE_MS, meaning: 'Pause when no delivery report is due' },
  TMS_WEBHOOK_RETENTION_DAYS: {
    kind: 'integer',
    default: 30,
    min: 1,
    max: 3650,
    meaning:
      'Finished delivery reports (delivered, failed, cancelled) and their attempt logs are deleted after this many days (checked hourly by every worker); pending ones are kept. A failed report can be redelivered until then',
  },
  TMS_MESSAGE_RETENTION_DAYS: {
    kind: 'integer',
    default: 90,
    min: 0,
    max: 3650,
    meaning:
      'Recipients\' personal data (phone, RSA ciphertext, template data) is erased from messages this many days after they finished (delivered, failed, or sent with no delivery report), checked hourly by every worker; the record itself (ids, status, times, price) stays. Queued and sending messages are never touched. `0` keeps it forever (see *Personal data: retention and purging*)',
  },
  TMS_PUBLIC_URL: {
    kind: 'httpUrl',
    default: '',
    defaultNote: '`http://HOST:PORT`',
    meaning:
      'The address people reach the service at (`https://tms.example.vn` behind a TLS proxy): console invitation links start with it, and console cookies are `Secure` when it is https',
  },
  TMS_TRUST_PROXY: {
    kind: 'boolean',
    default: false,
    meaning:
      'Set it behind a reverse proxy (TLS, load balancer): client addresses (console sign-in throttling) come from `X-Forwarded-For` and the protocol from `X-Forwarded-Proto`. Leave it off when clients reach the gateway directly, or they could pose as any address',
  },
  TMS_CONSOLE_SESSION_IDLE_MINUTES: {
    kind: 'integer',
    default: 30,
    min: 1,
    max: 1440,
    meaning: 'A console session ends after this many minutes without a request',
  },
  TMS_CONSOLE_SESSION_HOURS: {
    kind: 'integer',
    default: 12,
    min: 1,
    max: 720,
    meaning: 'A console session ends this many hours after sign-in, however active',
  },
  TMS_CONSOLE_INVITATION_HOURS: {
    kind: 'integer',
    default: 72,
    min: 1,
    max: 720,
    meaning: 'How long a console invitation link (to set a password) can be used',
  },
  ZNS_OAUTH_URL: { kind: 'httpUrl', default: 'https://oauth.zaloapp.com', meaning: 'ZNS OAuth v4 host (token refresh)' },
  ZNS_API_URL: {
    kind: 'httpUrl',
    default: 'https://business.openapi.zalo.me',
    meaning: 'ZNS business API host (send, quota, status, templates)',
  },
  ZNS_TIMEOUT_MS: {
    kind: 'integer',
    default: 10_000,
    min: 100,
    max: 120_000,
    meaning:
      'Deadline of a whole platform call (waiting for a connection, connecting, sending, the answer). A send that times out after it was written has an unknown outcome (see *Sends whose outcome is unknown*)',
  },
  ZNS_CONNECTIONS: { kind: 'integer', default: 512, min: 1, max: 10_000, meaning: 'Keep-alive connections per platform host per process' },
  TMS_DISPATCH_BATCH_SIZE: { kind: 'integer', default: 500, min: 1, max: 5000, meaning: 'Messages a worker claims per round' },
  TMS_DISPATCH_PARALLEL_ROUNDS: {
    kind: 'integer',
    default: 4,
    min: 1,
    max: 64,
    meaning: 'With the batch size, how many messages a worker holds at once (rounds × batch size, 2,000 by default)',
  },
  TMS_DISPATCH_ACCOUNT_CONCURRENCY: {
    kind: 'integer',
    default: 200,
    min: 1,
    max: 5000,
    meaning:
      'Sends in flight per sender account per worker process; an account holding twice that is skipped by the next claims, so one slow account cannot fill the worker',
  },
  TMS_DISPATCH_LEASE_MS: {
    kind: 'integer',
    default: 60_000,
    min: 1000,
    max: HOUR_MS,
    meaning: 'How long a claim is held; a dead worker\'s claims are reconciled after it',
  },
  TMS_DISPATCH_BACKOFF_MS: {
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 10 * MINUTE_MS,
    meaning: 'First retry delay after a transient fault; doubles per attempt (at most 5 min); 5 attempts in all',
  },
  TMS_DISPATCH_POLL_MS: {
    kind: 'integer',
    default: 250,
    min: 10,
    max: MINUTE_MS,
    meaning: 'Pause when nothing is due: scheduled messages go within this of their time',
  },
  TMS_DISPATCH_UNCONFIRMED_GRACE_MS: {
    kind: 'integer',
    default: 5 * MINUTE_MS,
    min: 0,
    max: DAY_MS,
    meaning:
      'After a worker dies mid-send, or a send\'s outcome is unknown (timeout after writing, lost connection), how long it waits for a delivery event before they are sent again (see *Crash reconciliation*)',
  },
  TMS_TEMPLATE_SYNC_MS: {
    kind: 'integer',
    default: 15 * MINUTE_MS,
    defaultNote: '15 min',
    min: 0,
    max: 7 * DAY_MS,
    meaning: 'How often each worker syncs every workspace\'s templates from the platform (also once at start); `0` disables it',
  },
  TMS_DELIVERY_CHECK_AFTER_MS: {
    kind: 'integer',
    default: 15 * MINUTE_MS,
    defaultNote: '15 min',
    min: 0,
    max: DAY_MS,
    meaning:
      'A sent message with no delivery event after this long is looked up at the platform\'s status endpoint (again every interval, for 24 h); `0` disables it (see *Crash reconciliation*)',
  },
  TMS_PLATFORM_QUOTA_CACHE_MS: {
    kind: 'integer',
    default: 30_000,
    min: 0,
    max: HOUR_MS,
    meaning:
      'How long each process uses one platform quota lookup per sender account (see *Daily quota*). `0`: never ask the platform; the configured `daily_quota` applies',
  },
  TMS_PLATFORM_QUOTA_RETRY_MS: {
    kind: 'integer',
    default: 5000,
    min: 100,
    max: 10 * MINUTE_MS,
    meaning: 'How long a failed quota lookup is remembered before the platform is asked again',
  },
  TMS_HTTP_REQUEST_TIMEOUT_MS: {
    kind: 'integer',
    default: 30_000,
    min: 1000,
    max: 10 * MINUTE_MS,
    meaning: 'A request (headers and body) must arrive in full within this; slower is answered 408 `request_timeout` and the connection closed',
  },
  TMS_HTTP_HEADERS_TIMEOUT_MS: {
    kind: 'integer',
    default: 10_000,
    min: 1000,
    max: 10 * MINUTE_MS,
    meaning: 'The request headers must arrive within this',
  },
  TMS_HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    kind: 'integer',
    // Above the 60 s idle timeout of common load balancers, so they never reuse a connection we just closed.
    default: 72_000,
    min: 1000,
    max: 10 * MINUTE_MS,
    meaning: 'How long an idle keep-alive connection stays open; above the 60 s idle timeout of common load balancers',
  },
} as const satisfies Record<string, Variable>;

export type VariableName = keyof typeof CONFIG_VARIABLES;

/** Every variable's parsed value, before the rules that join two variables are checked. */
export type VariableValues = { readonly [Name in VariableName]: ValueOf<(typeof CONFIG_VARIABLES)[Name]> };

export const VARIABLE_NAMES = Object.keys(CONFIG_VARIABLES) as VariableName[];
