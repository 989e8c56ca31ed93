/**
 * Several API processes on one PostgreSQL database, ten busy workspaces (docs/scaling.md).
 *
 * scaling-postgres: on one fresh database, K `tms api` processes (TMS_BENCH_SCALING_PROCESSES, 3)
 * sharing their secrets, and ten workspaces, each with its own sender account, template, API key
 * and a balance that never runs out. Single sends at TMS_BENCH_CONNECTIONS (50) in all, the
 * connections dealt over the processes in turn (client-side round robin standing in for a load
 * balancer), in four parts:
 *
 *   1. one process, ten workspaces;
 *   2. K processes, every request from one workspace;
 *   3. K processes, the same load spread over ten workspaces (each request the next workspace, so
 *      every process serves every workspace);
 *   4. K processes, ten workspaces, each workspace's requests always to the same process (a load
 *      balancer that routes by API key).
 *
 * During each measured run a separate connection samples, about 40 times a second, how many
 * acceptance transactions are open, which of them wait on a lock (pg_stat_activity, pg_locks) and
 * for which rows of which workspace: pgrowlocks lists the locked wallet (workspaces) and quota
 * reservation rows with the transactions holding them. Acceptance that serialises on one lock
 * shows waits in most samples, with all open transactions but one waiting, behind one holder.
 *
 * Also per part: CPU of the API processes and of this database's PostgreSQL backends per request,
 * busy cores of the whole machine, commits and WAL fsyncs per second. Afterwards, with the
 * processes stopped, every msg_id answered 202 must be in the database, and every wallet must
 * balance: top-up minus the price of its messages, its accepted count equal to its rows, and its
 * ledger summing to its balance.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon, { type RequestData } from 'autocannon';
import pg from 'pg';
import { benchGatewayEnvironment, freePort, readCpuSeconds, startServer, type ServerProcess } from './processes.ts';
import { newTally, type Tally } from './load.ts';
import { phoneOf } from './phones.ts';
import { fmt } from './report.ts';
import { checkPostgres, type StoreCheck } from './verify.ts';
import type * as Harness from '../test/harness.ts';
import type { TestGateway } from '../test/harness.ts';

export const SCALING_SCENARIOS = [{ id: 'scaling-postgres', store: 'postgres' }] as const;

export type ScalingScenario = (typeof SCALING_SCENARIOS)[number];

export interface ScalingContext {
  root: string;
  harness: typeof Harness;
  /** API processes (K). */
  processes: number;
  /** Connections in all, dealt over the processes. */
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /** The PostgreSQL server's maintenance URL (for counters read from outside the bench database). */
  adminUrl: string;
  extraEnv: Record<string, string>;
  nodeArgs: string[];
  say(text: string): void;
}

type Routing = 'round-robin' | 'by-key';

interface Part {
  id: string;
  processes: number;
  workspaces: number;
  routing: Routing;
}

/** What the lock samples saw during one measured run. */
export interface LockEvidence {
  samples: number;
  /** Mean acceptance transactions open (active or between statements) per sample. */
  meanOpenTransactions: number;
  /** Mean backends waiting on a lock per sample. */
  meanWaiting: number;
  /** Share of samples in which at least one backend waited on a lock, 0..1. */
  shareWithWait: number;
  /** Share of samples in which two or more transactions were open and all but one waited on a lock. */
  shareSerialised: number;
  /** Waiting backends counted over all samples, per object ("quota_reservations row", …). */
  waitsByObject: Record<string, number>;
  /** Whether locked rows were read (pgrowlocks): without them, waits are named by lock type only. */
  rowLocksRead: boolean;
  /** In samples with a wait: mean distinct workspaces whose rows are waited for. */
  meanWorkspacesWaitedOn: number;
  /** The most workspaces whose rows were waited for in one sample. */
  mostWorkspacesWaitedOn: number;
  /** In samples with a wait: mean distinct transactions the waiters wait behind (1: one queue). */
  meanBlockers: number;
}

export interface ScalingPartResult {
  id: string;
  processes: number;
  workspaces: number;
  routing: Routing;
  connections: number;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** User + system time of the API processes per good answer. */
  apiCpuUsPerRequest: number | null;
  /** User + system time of the bench database's PostgreSQL backends per good answer (the sampler's excluded). */
  postgresCpuUsPerRequest: number | null;
  /** Busy cores of the whole machine during the run (of cpus().length). */
  machineBusyCores: number | null;
  /** The load generator's own CPU, in cores. */
  loadGeneratorCores: number;
  /** The lock sampler's PostgreSQL backend, in cores: what the sampling itself cost. */
  samplerCores: number | null;
  commitsPerSecond: number | null;
  walSyncsPerSecond: number | null;
  /** WAL written by the whole server per good answer, bytes. */
  walBytesPerRequest: number | null;
  locks: LockEvidence | null;
  errors: number;
  errorSamples: string[];
}

export interface ScalingResult {
  id: string;
  store: 'postgres';
  processes: number;
  connections: number;
  parts: ScalingPartResult[];
  storeCheck: StoreCheck | null;
  /** Workspaces whose wallet, accepted count or ledger did not match their messages. */
  walletMismatches: string[];
  peakRssMb: (number | null)[];
  problems: string[];
}

const WORKSPACES = 10;
const BALANCE = 1_000_000_000_000;
const PRICE = 300;
/** About 40 samples a second: enough for a share, little work for PostgreSQL (the sampler's CPU is reported). */
const SAMPLE_PAUSE_MS = 20;

function partsFor(processes: number): Part[] {
  return [
    { id: 'k1-ten', processes: 1, workspaces: WORKSPACES, routing: 'round-robin' },
    { id: `k${processes}-one`, processes, workspaces: 1, routing: 'round-robin' },
    { id: `k${processes}-ten`, processes, workspaces: WORKSPACES, routing: 'round-robin' },
    { id: `k${processes}-ten-by-key`, processes, workspaces: WORKSPACES, routing: 'by-key' },
  ];
}

const partLabel = (part: Pick<Part, 'processes' | 'workspaces' | 'routing'>): string =>
  `${part.processes} process${part.processes === 1 ? '' : 'es'}, ${part.workspaces === 1 ? 'one workspace' : `${part.workspaces} workspaces`}` +
  (part.workspaces > 1 && part.processes > 1 ? (part.routing === 'by-key' ? ', routed by key' : ', round robin') : '');

interface SeededKey {
  apiKey: string;
  templateId: string;
  workspaceId: string;
}

// ---------------------------------------------------------------------------------------------
// Machine and database counters

/** Busy and total jiffies of the whole machine, from /proc/stat. */
function machineJiffies(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
    return { busy: user + nice + system + irq + softirq + steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
  } catch {
    return null;
  }
}

interface DatabaseCounters {
  commits: number;
  walSyncs: number | null;
  walBytes: number | null;
  /** CPU seconds so far of each client backend of the bench database, by pid. */
  backendCpu: Map<number, number>;
}

async function readCounters(admin: pg.Client, database: string, sampler: pg.Client): Promise<DatabaseCounters> {
  const commits = Number((await admin.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [database])).rows[0]?.n ?? 0);
  // The whole server's WAL (PostgreSQL 14 and later): nothing else should write during the run.
  let walSyncs: number | null = null;
  let walBytes: number | null = null;
  try {
    const wal = (await admin.query<{ syncs: string; bytes: string }>('SELECT wal_sync AS syncs, wal_bytes AS bytes FROM pg_stat_wal')).rows[0];
    walSyncs = wal ? Number(wal.syncs) : null;
    walBytes = wal ? Number(wal.bytes) : null;
  } catch {
    walSyncs = null;
  }
  const samplerPid = (sampler as unknown as { processID: number | null }).processID;
  const pids = (
    await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'", [database])
  ).rows.map((row) => row.pid);
  const backendCpu = new Map<number, number>();
  for (const pid of pids) {
    if (pid === samplerPid) continue;
    const cpu = readCpuSeconds(pid);
    if (cpu !== null) backendCpu.set(pid, cpu);
  }
  return { commits, walSyncs, walBytes, backendCpu };
}

/** CPU seconds the backends alive at both readings used between them. */
function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number | null {
  let total = 0;
  let seen = 0;
  for (const [pid, cpu] of after) {
    const start = before.get(pid);
    if (start === undefined) continue;
    total += cpu - start;
    seen += 1;
  }
  return seen > 0 ? total : null;
}

// ---------------------------------------------------------------------------------------------
// Lock sampling

/** A locked row of the tables acceptance locks (pgrowlocks), with the workspace it belongs to. */
interface RowLock {
  relation: string;
  workspace: string;
  /** The locked row version's ctid, "(page,tuple)". */
  at: string;
  /** Transactions holding it. */
  xids: string[];
}

interface BackendState {
  pid: number;
  in_transaction: boolean;
  waits: boolean;
  query: string;
  blockers: number[] | null;
}

/** A lock a backend waits for (not granted). */
interface AwaitedLock {
  pid: number;
  locktype: string;
  xid: string | null;
  relation: string | null;
  at: string | null;
}

interface Sample {
  backends: BackendState[] | null;
  awaited: AwaitedLock[] | null;
  row_locks: RowLock[] | null;
}

/**
 * One sample, one statement: every client backend of the bench database but the sampler's, the
 * locks they wait for, and (with pgrowlocks) every locked row of workspaces (wallets) and
 * quota_reservations with the transactions holding it and the workspace it belongs to. A backend
 * waiting for a row waits for the holder's transaction id (the first waiter, or an upsert meeting
 * the row through its unique index) or for the row's tuple lock (later waiters): either way the
 * row locks say which rows, of which workspace, it waits for.
 */
function sampleQuery(withRowLocks: boolean): string {
  const rowLocks = withRowLocks
    ? `(SELECT json_agg(r) FROM (
         SELECT 'workspaces' AS relation, w.id AS workspace, l.locked_row::text AS at, l.xids::text[] AS xids
         FROM workspaces w JOIN pgrowlocks('workspaces') l ON w.ctid = l.locked_row
         UNION ALL
         SELECT 'quota_reservations', s.workspace_id, l.locked_row::text, l.xids::text[]
         FROM quota_reservations q JOIN pgrowlocks('quota_reservations') l ON q.ctid = l.locked_row
         JOIN sender_accounts s ON s.oa_id = q.oa_id) r)`
    : 'NULL';
  return `
    SELECT
      (SELECT json_agg(json_build_object('pid', a.pid, 'in_transaction', a.xact_start IS NOT NULL, 'waits', a.wait_event_type = 'Lock',
                                         'query', left(a.query, 120), 'blockers', CASE WHEN a.wait_event_type = 'Lock' THEN pg_blocking_pids(a.pid) END))
       FROM pg_stat_activity a
       WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()) AS backends,
      (SELECT json_agg(json_build_object('pid', l.pid, 'locktype', l.locktype, 'xid', l.transactionid::text, 'relation', l.relation::regclass::text,
                                         'at', '(' || l.page || ',' || l.tuple || ')'))
       FROM pg_locks l
       WHERE NOT l.granted AND (l.database IS NULL OR l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))) AS awaited,
      ${rowLocks} AS row_locks`;
}

/** The rows a waiting backend waits for, from the lock it waits on. */
function rowsAwaited(wait: AwaitedLock | undefined, rowLocks: RowLock[]): RowLock[] {
  if (!wait) return [];
  if (wait.locktype === 'tuple') return rowLocks.filter((row) => row.relation === wait.relation && row.at === wait.at);
  if (wait.locktype === 'transactionid' && wait.xid !== null) return rowLocks.filter((row) => row.xids.includes(wait.xid!));
  return [];
}

/** What a waiting backend waits for, as a line of the report. */
function describeAwaited(wait: AwaitedLock | undefined, rows: RowLock[], query: string): string {
  if (rows.length === 0) {
    if (!wait) return 'a lock released before it was read';
    return `${wait.locktype}${wait.relation ? ` on ${wait.relation}` : ''}, not a wallet or quota row ("${query.replace(/\s+/g, ' ').trim().slice(0, 30)}…")`;
  }
  const workspaces = new Set(rows.map((row) => row.workspace)).size;
  const relations = [...new Set(rows.map((row) => (row.relation === 'workspaces' ? 'wallet' : 'quota reservation')))].sort().join(' and ');
  return `${relations} row${rows.length === 1 ? '' : 's'} of ${workspaces === 1 ? 'one workspace' : `${workspaces} workspaces`}`;
}

class LockSampler {
  private samples = 0;
  private openTotal = 0;
  private waitingTotal = 0;
  private withWait = 0;
  private serialised = 0;
  private workspacesWaitedTotal = 0;
  private workspacesWaitedMost = 0;
  private blockersTotal = 0;
  private readonly waitsByObject: Record<string, number> = {};
  private running = false;
  private loop: Promise<void> | null = null;
  private failure: unknown = null;

  constructor(
    private readonly client: pg.Client,
    private readonly withRowLocks: boolean,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<LockEvidence> {
    this.running = false;
    await this.loop;
    if (this.failure) throw this.failure;
    const perSample = (total: number) => (this.samples > 0 ? total / this.samples : Number.NaN);
    const perWaitSample = (total: number) => (this.withWait > 0 ? total / this.withWait : 0);
    return {
      samples: this.samples,
      rowLocksRead: this.withRowLocks,
      meanOpenTransactions: perSample(this.openTotal),
      meanWaiting: perSample(this.waitingTotal),
      shareWithWait: perSample(this.withWait),
      shareSerialised: perSample(this.serialised),
      waitsByObject: this.waitsByObject,
      meanWorkspacesWaitedOn: perWaitSample(this.workspacesWaitedTotal),
      mostWorkspacesWaitedOn: this.workspacesWaitedMost,
      meanBlockers: perWaitSample(this.blockersTotal),
    };
  }

  private async run(): Promise<void> {
    const query = sampleQuery(this.withRowLocks);
    try {
      while (this.running) {
        const row = (await this.client.query<Sample>(query)).rows[0];
        if (row) this.record(row);
        await new Promise((resolveWait) => setTimeout(resolveWait, SAMPLE_PAUSE_MS));
      }
    } catch (error) {
      this.failure = error;
    }
  }

  private record(sample: Sample): void {
    this.samples += 1;
    const backends = sample.backends ?? [];
    const open = backends.filter((backend) => backend.in_transaction).length;
    const waiting = backends.filter((backend) => backend.waits);
    this.openTotal += open;
    this.waitingTotal += waiting.length;
    if (waiting.length === 0) return;
    this.withWait += 1;
    if (open >= 2 && waiting.length >= open - 1) this.serialised += 1;
    const workspaces = new Set<string>();
    const blockers = new Set<number>();
    for (const backend of waiting) {
      const wait = (sample.awaited ?? []).find((lock) => lock.pid === backend.pid);
      const rows = rowsAwaited(wait, sample.row_locks ?? []);
      const object = describeAwaited(wait, rows, backend.query);
      this.waitsByObject[object] = (this.waitsByObject[object] ?? 0) + 1;
      for (const row of rows) workspaces.add(row.workspace);
      for (const pid of backend.blockers ?? []) blockers.add(pid);
    }
    this.workspacesWaitedTotal += workspaces.size;
    this.workspacesWaitedMost = Math.max(this.workspacesWaitedMost, workspaces.size);
    this.blockersTotal += blockers.size;
  }
}

// ---------------------------------------------------------------------------------------------
// Load

interface LoadRun {
  seconds: number;
  tally: Tally;
  latenciesMs: number[];
  connectionErrors: number;
  timeouts: number;
}

/**
 * Single sends for `seconds` over the first `part.processes` processes: one autocannon per
 * process, the connections dealt in turn. Round robin: each request is from the next workspace of
 * all; by key: a process serves only the workspaces whose index falls to it.
 */
async function runSingleSends(servers: ServerProcess[], keys: SeededKey[], part: Part, connections: number, seconds: number, ids: string[]): Promise<LoadRun> {
  const used = servers.slice(0, part.processes);
  const workspaces = keys.slice(0, part.workspaces);
  const tally = newTally();
  const latenciesMs: number[] = [];
  let counter = 0;
  const runs = used.map((server, index) => {
    const own = part.routing === 'by-key' ? workspaces.filter((_, w) => w % part.processes === index) : workspaces;
    const share = Math.floor(connections / used.length) + (index < connections % used.length ? 1 : 0);
    const instance = autocannon({
      url: server.url,
      connections: share,
      duration: seconds,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/messages/send',
          setupRequest: (data: RequestData) => {
            counter += 1;
            const key = own[counter % own.length]!;
            return {
              ...data,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${key.apiKey}` },
              body: JSON.stringify({ template_id: key.templateId, phone: phoneOf(counter), template_data: { name: 'Nguyễn Văn A', code: `C${counter}` } }),
            };
          },
          onResponse: (status: number, body: string) => {
            tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
            let msgId: unknown = null;
            if (status === 202) {
              try {
                const parsed = JSON.parse(body) as { msg_id?: unknown; status?: unknown };
                if (parsed.status === 'queued') msgId = parsed.msg_id;
              } catch {
                msgId = null;
              }
            }
            if (typeof msgId === 'string') {
              tally.good += 1;
              ids.push(msgId);
            } else {
              tally.bad += 1;
              if (tally.samples.length < 5) tally.samples.push(`${status}: ${body.slice(0, 300)}`);
            }
          },
        },
      ],
    });
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTimeMs: number) => {
      latenciesMs.push(responseTimeMs);
    });
    return instance;
  });
  const results = await Promise.all(runs);
  return {
    seconds: Math.max(...results.map((result) => result.duration)),
    tally,
    latenciesMs,
    connectionErrors: results.reduce((sum, result) => sum + result.errors - result.timeouts, 0),
    timeouts: results.reduce((sum, result) => sum + result.timeouts, 0),
  };
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

// ---------------------------------------------------------------------------------------------
// Seeding and checks

async function seedWorkspaces(harness: typeof Harness, url: string, adminToken: string): Promise<SeededKey[]> {
  // seedWorkspace only calls the operator API; give it just that.
  const operator = { admin: (method: string, path: string, body?: unknown) => harness.httpRequest(url, method, `/admin/v1${path}`, { key: adminToken, body }) };
  const keys: SeededKey[] = [];
  for (let index = 0; index < WORKSPACES; index += 1) {
    const seeded = await harness.seedWorkspace(operator as Pick<TestGateway, 'admin'> as TestGateway, {
      balance: BALANCE,
      dailyQuota: 1_000_000_000,
      price: PRICE,
      scopes: ['messages:send'],
      name: `bench scaling ${index + 1}`,
    });
    keys.push({ apiKey: seeded.apiKey, templateId: seeded.templateId, workspaceId: seeded.workspaceId });
  }
  return keys;
}

/** Every wallet equals its top-up minus its messages' price, counts its messages, and equals its ledger's sum. */
async function checkWallets(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = (
      await client.query<{ id: string; balance: string; accepted: string; messages: string; priced: string; ledger: string }>(`
        SELECT w.id, w.balance, w.messages_accepted AS accepted,
               (SELECT count(*) FROM messages m WHERE m.workspace_id = w.id) AS messages,
               (SELECT coalesce(sum(price), 0) FROM messages m WHERE m.workspace_id = w.id) AS priced,
               (SELECT coalesce(sum(amount), 0) FROM wallet_ledger l WHERE l.workspace_id = w.id) AS ledger
        FROM workspaces w`)
    ).rows;
    const mismatches: string[] = [];
    for (const row of rows) {
      const balance = Number(row.balance);
      const expected = BALANCE - Number(row.priced);
      if (balance !== expected || Number(row.accepted) !== Number(row.messages) || Number(row.ledger) !== balance) {
        mismatches.push(`${row.id}: balance ${balance} (top-up minus messages: ${expected}), accepted ${row.accepted} for ${row.messages} rows, ledger sum ${row.ledger}`);
      }
    }
    return mismatches;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// The scenario

/** pgrowlocks (PostgreSQL's contrib) names the rows waited for; without it, waits are named by lock type. */
async function installRowLocks(client: pg.Client): Promise<boolean> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pgrowlocks');
    return true;
  } catch {
    return false;
  }
}

async function measurePart(
  context: ScalingContext,
  servers: ServerProcess[],
  keys: SeededKey[],
  part: Part,
  databaseUrl: string,
  ids: string[],
): Promise<ScalingPartResult> {
  const { say } = context;
  const databaseName = new URL(databaseUrl).pathname.slice(1);
  say(`  ${part.id}: ${partLabel(part)}; warm-up ${context.warmupSeconds} s, then ${context.seconds} s at ${context.connections} connections`);
  const warmup = await runSingleSends(servers, keys, part, context.connections, context.warmupSeconds, ids);
  const admin = new pg.Client({ connectionString: context.adminUrl });
  const sampler = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await sampler.connect();
  try {
    const withRowLocks = await installRowLocks(sampler);
    const samplerPid = (sampler as unknown as { processID: number }).processID;
    const apiBefore = servers.map((server) => server.cpuSeconds());
    const countersBefore = await readCounters(admin, databaseName, sampler);
    const samplerBefore = readCpuSeconds(samplerPid);
    const machineBefore = machineJiffies();
    const loadBefore = process.cpuUsage();
    const lockSampler = new LockSampler(sampler, withRowLocks);
    lockSampler.start();
    const run = await runSingleSends(servers, keys, part, context.connections, context.seconds, ids);
    const locks = await lockSampler.stop();
    const loadCpu = process.cpuUsage(loadBefore);
    const machineAfter = machineJiffies();
    const samplerAfter = readCpuSeconds(samplerPid);
    const countersAfter = await readCounters(admin, databaseName, sampler);
    const apiAfter = servers.map((server) => server.cpuSeconds());

    const good = run.tally.good;
    let apiCpu: number | null = 0;
    for (const [index, before] of apiBefore.entries()) {
      const after = apiAfter[index];
      if (before === null || after === null || after === undefined || apiCpu === null) apiCpu = null;
      else apiCpu += after - before;
    }
    const postgresCpu = backendCpuBetween(countersBefore.backendCpu, countersAfter.backendCpu);
    const machineBusyCores =
      machineBefore && machineAfter && machineAfter.total > machineBefore.total
        ? ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * cpus().length
        : null;
    const sorted = run.latenciesMs.sort((a, b) => a - b);
    const errorTally = [warmup, run];
    const errors = errorTally.reduce((sum, load) => sum + load.tally.bad + load.connectionErrors + load.timeouts, 0);
    const result: ScalingPartResult = {
      id: part.id,
      processes: part.processes,
      workspaces: part.workspaces,
      routing: part.routing,
      connections: context.connections,
      seconds: run.seconds,
      requests: good,
      requestsPerSecond: good / run.seconds,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      apiCpuUsPerRequest: apiCpu !== null && good > 0 ? (apiCpu * 1e6) / good : null,
      postgresCpuUsPerRequest: postgresCpu !== null && good > 0 ? (postgresCpu * 1e6) / good : null,
      machineBusyCores,
      loadGeneratorCores: (loadCpu.user + loadCpu.system) / 1e6 / run.seconds,
      samplerCores: samplerBefore !== null && samplerAfter !== null ? (samplerAfter - samplerBefore) / run.seconds : null,
      commitsPerSecond: (countersAfter.commits - countersBefore.commits) / run.seconds,
      walSyncsPerSecond: countersAfter.walSyncs !== null && countersBefore.walSyncs !== null ? (countersAfter.walSyncs - countersBefore.walSyncs) / run.seconds : null,
      walBytesPerRequest: countersAfter.walBytes !== null && countersBefore.walBytes !== null && good > 0 ? (countersAfter.walBytes - countersBefore.walBytes) / good : null,
      locks,
      errors,
      errorSamples: [...warmup.tally.samples, ...run.tally.samples].slice(0, 5),
    };
    say(
      `    ${fmt(result.requestsPerSecond)} req/s, p50 ${fmt(result.p50Ms, 1)} ms, p99 ${fmt(result.p99Ms, 1)} ms; ` +
        `lock waits in ${fmt(100 * locks.shareWithWait, 1)}% of ${locks.samples} samples (${describeWaits(locks)})`,
    );
    return result;
  } finally {
    await sampler.end().catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

export async function runScaling(scenario: ScalingScenario, context: ScalingContext): Promise<ScalingResult> {
  const { harness, say } = context;
  const result: ScalingResult = {
    id: scenario.id,
    store: scenario.store,
    processes: context.processes,
    connections: context.connections,
    parts: [],
    storeCheck: null,
    walletMismatches: [],
    peakRssMb: [],
    problems: [],
  };
  say(`${scenario.id}: ${context.processes} \`tms api\` processes on one PostgreSQL database, ${WORKSPACES} workspaces, single sends at ${context.connections} connections`);
  const database = await harness.createTestDatabase('postgres');
  const servers: ServerProcess[] = [];
  const ids: string[] = [];
  try {
    // One environment for all: the same operator token and master key, as on one deployment.
    const env = benchGatewayEnvironment(harness, database, context.extraEnv);
    const ports = await Promise.all(Array.from({ length: context.processes }, () => freePort()));
    // Started one after the other: each runs the migrations (the first applies them).
    for (const port of ports) {
      servers.push(await startServer({ cwd: context.root, script: join(context.root, 'packages/gateway/bin/tms.js'), args: ['api'], nodeArgs: context.nodeArgs, env, port }));
    }
    const keys = await seedWorkspaces(harness, servers[0]!.url, env.TMS_ADMIN_TOKEN!);
    for (const part of partsFor(context.processes)) {
      if (part.processes > servers.length) continue;
      const partResult = await measurePart(context, servers, keys, part, database.env.DATABASE_URL!, ids);
      result.parts.push(partResult);
      if (partResult.errors > 0) result.problems.push(`${part.id}: ${partResult.errors} errors, e.g. ${partResult.errorSamples[0] ?? 'a connection error'}`);
      const ended = servers.map((server) => server.endedEarly()).find((early) => early !== null);
      if (ended) throw new Error(`an API process ${ended}`);
    }
    result.peakRssMb = servers.map((server) => server.peakRssMb());
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    result.problems.push(`did not complete: ${message.split('\n').slice(0, 16).join('\n')}`);
  } finally {
    for (const [index, server] of servers.entries()) {
      const code = await server.stop();
      if (code !== 0) result.problems.push(`API process ${index + 1} exited with ${code}: ${server.output().split('\n').slice(-8).join('\n')}`);
    }
  }
  try {
    if (ids.length > 0) {
      const check = await checkPostgres(database.env.DATABASE_URL!, context.adminUrl, ids);
      result.storeCheck = check;
      if (check.missing > 0) result.problems.push(`LOST MESSAGES: ${check.missing} msg_ids answered with 202 are not in the database`);
      // Requests in flight when a load run stopped may be committed without their answer being
      // read: at most one per connection per run (a warm-up and a measured run per part).
      const inFlightLimit = 2 * context.connections * result.parts.length;
      if (check.unanswered < 0 || check.unanswered > inFlightLimit) {
        result.problems.push(`database holds ${check.stored} messages for ${check.answered} answered (more than ${inFlightLimit} in flight can explain)`);
      }
      result.walletMismatches = await checkWallets(database.env.DATABASE_URL!);
      if (result.walletMismatches.length > 0) result.problems.push(`WALLETS DO NOT BALANCE: ${result.walletMismatches.join('; ')}`);
    }
  } catch (error) {
    result.problems.push(`store check: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await database.drop();
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Report

/** The objects waited on, most waits first, as shares of all waits. */
function describeWaits(locks: LockEvidence): string {
  const entries = Object.entries(locks.waitsByObject).sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return 'none';
  return entries
    .slice(0, 3)
    .map(([object, count]) => `${object} ${fmt((100 * count) / total)}%`)
    .join(', ');
}

export function scalingTable(results: ScalingResult[]): string {
  const header = [
    'part',
    'API procs',
    'workspaces',
    'routing',
    'requests/s',
    'p50 ms',
    'p99 ms',
    'API CPU µs/req',
    'PG CPU µs/req',
    'busy cores',
    'commits/s',
    'req/commit',
    'WAL fsyncs/s',
    'WAL B/req',
    'open tx',
    'samples waiting',
    'serialised',
    'workspaces waited',
    'errors',
  ];
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const result of results) {
    for (const part of result.parts) {
      const locks = part.locks;
      rows.push([
        part.id,
        String(part.processes),
        String(part.workspaces),
        part.workspaces > 1 && part.processes > 1 ? part.routing : '-',
        fmt(part.requestsPerSecond),
        fmt(part.p50Ms, 1),
        fmt(part.p99Ms, 1),
        fmt(part.apiCpuUsPerRequest),
        fmt(part.postgresCpuUsPerRequest),
        fmt(part.machineBusyCores, 2),
        fmt(part.commitsPerSecond),
        part.commitsPerSecond ? fmt(part.requestsPerSecond / part.commitsPerSecond, 1) : '-',
        fmt(part.walSyncsPerSecond),
        fmt(part.walBytesPerRequest),
        locks ? fmt(locks.meanOpenTransactions, 2) : '-',
        locks ? `${fmt(100 * locks.shareWithWait, 1)}%` : '-',
        locks ? `${fmt(100 * locks.shareSerialised, 1)}%` : '-',
        locks ? fmt(locks.meanWorkspacesWaitedOn, 2) : '-',
        String(part.errors),
      ]);
      if (locks) {
        notes.push(
          `  ${part.id}: ${locks.samples} samples, ${fmt(100 * locks.shareWithWait, 1)}% with a lock wait; waits for: ${describeWaits(locks)}` +
            (locks.rowLocksRead ? '' : ' (pgrowlocks not available: rows not named)') +
            `; mean waiting ${fmt(locks.meanWaiting, 2)}; when any waits, rows of ${fmt(locks.meanWorkspacesWaitedOn, 2)} workspaces (at most ${locks.mostWorkspacesWaitedOn}) behind ${fmt(locks.meanBlockers, 2)} holders;` +
            ` load generator ${fmt(part.loadGeneratorCores, 2)} cores, sampler ${fmt(part.samplerCores, 2)} cores`,
        );
      }
    }
    if (result.storeCheck) {
      const check = result.storeCheck;
      notes.push(
        `  ${result.id}: ${fmt(check.answered)} msg_ids answered 202, all in the database: ${check.missing === 0 ? 'yes' : `NO, ${check.missing} missing`}` +
          ` (${fmt(check.stored)} stored); wallets balance: ${result.walletMismatches.length === 0 ? 'yes' : `NO (${result.walletMismatches.length})`}; API peak RSS MB ${result.peakRssMb.map((value) => fmt(value)).join(' / ')}`,
      );
    }
  }
  notes.unshift(
    '  open tx: acceptance transactions open per sample; samples waiting: share of samples with a backend waiting on a lock;',
    '  serialised: share of samples with 2 or more open and all but one waiting; workspaces waited: distinct workspaces whose rows are waited for, when any waits;',
    '  busy cores: the whole machine (load generator, PostgreSQL and anything else included); commits/s: this database only',
  );
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((cells) => cells[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 || column === 3 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line), ...notes].join('\n');
}

/**
 * The claims: ten workspaces over K processes are not serialised on one lock (their share of
 * serialised samples well under the one-workspace share), and more API processes add throughput
 * on this machine or not (reported, not judged: the cores are shared).
 */
export function scalingTargets(results: ScalingResult[]): { text: string; met: boolean | null }[] {
  const targets: { text: string; met: boolean | null }[] = [];
  for (const result of results) {
    const valid = result.problems.length === 0;
    const one = result.parts.find((part) => part.workspaces === 1);
    const ten = result.parts.find((part) => part.workspaces > 1 && part.processes === result.processes && part.routing === 'round-robin');
    const single = result.parts.find((part) => part.processes === 1);
    if (one?.locks && ten?.locks) {
      targets.push({
        text:
          `${result.id}: ten workspaces over ${result.processes} API processes do not serialise on one lock: serialised in ≤ half the samples of one workspace ` +
          `(${fmt(100 * ten.locks.shareSerialised, 1)}% vs ${fmt(100 * one.locks.shareSerialised, 1)}%; ${fmt(ten.requestsPerSecond)} vs ${fmt(one.requestsPerSecond)} req/s)`,
        met: valid ? ten.locks.shareSerialised <= one.locks.shareSerialised / 2 : null,
      });
    }
    if (single && ten) {
      targets.push({
        text: `${result.id}: ${result.processes} API processes vs 1, ten workspaces: ${fmt(ten.requestsPerSecond)} vs ${fmt(single.requestsPerSecond)} req/s (${fmt(ten.requestsPerSecond / single.requestsPerSecond, 2)}×; reported, not judged: the cores are shared)`,
        met: null,
      });
    }
    targets.push({ text: `${result.id}: every 202 in the database and every wallet balanced`, met: result.storeCheck ? valid : null });
  }
  return targets;
}
