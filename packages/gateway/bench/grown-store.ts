/**
 * Cost as the store grows: the gateway on a store holding TMS_BENCH_GROWN_MESSAGES (5,000,000)
 * messages, TMS_BENCH_GROWN_BUSIEST (1,000,000) of them in the busiest workspace and the rest over
 * TMS_BENCH_GROWN_WORKSPACES (19) others (the n-th of them with a share of 1/(n+1)), against the
 * same gateway on an empty store.
 *
 * Per store (SQLite, PostgreSQL):
 * 1. Two fresh databases, seeded alike through the services (workspaces, sender accounts,
 *    templates, API keys; in the busiest workspace also the simulator's demo OA with its template
 *    250002 for dispatch, and a template for the single sends). One of them is grown by bulk insert
 *    (grown-store-data.ts), the workspaces' histories interleaved in creation order as a live
 *    gateway writes them: 90 days of messages (85% delivered, 8% failed, 4% sent, 3% scheduled for
 *    the coming days: no backlog, as workers that keep up leave none), a ledger charge per 50
 *    messages, a delivery report per finished message of the last 29 days (the outbox keeps 30),
 *    the platform's event per delivered message (kept for ever), and idempotency records for a
 *    third of the last 24 hours' messages (they live 24 hours). PostgreSQL is then vacuumed and
 *    analysed: a database that grew over months has had autovacuum visit it (this benchmark's
 *    server runs with autovacuum off, so it is done once, here). SQLite is left as the gateway
 *    leaves it: no ANALYZE.
 * 2. Reads: `tms api` on the grown store; with an API key of the busiest workspace, each read of
 *    GET /api/v1/messages (newest page, each filter alone, status=failed&from, offset=10000) and
 *    GET /api/v1/messages/{id} (random ids of its history) is asked TMS_BENCH_GROWN_REQUESTS (200)
 *    times after 20 warm-up requests, one request at a time on one connection, the reads in turn.
 *    Latency is the client's on loopback. Targets: p99 ≤ 20 ms for a list, ≤ 50 ms for the deep
 *    offset, ≤ 5 ms by id.
 * 3. Dispatch, `queued` → `sent`: TMS_BENCH_GROWN_DISPATCH_MESSAGES (20,000) accepted in
 *    500-recipient batches into the busiest workspace, then one `tms worker` sends them to the ZNS
 *    simulator (its own process, events off); timed from the worker's start until none is queued or
 *    sending.
 * 4. Acceptance: single sends from the busiest workspace at TMS_BENCH_CONNECTIONS (50) for
 *    TMS_BENCH_SECONDS (10) after TMS_BENCH_WARMUP_SECONDS (2), as bench/load.ts; every 202 is
 *    looked up in the store afterwards.
 * (TMS_BENCH_GROWN_PARTS, e.g. "reads,dispatch", runs only those parts; all three by default.)
 * Dispatch and acceptance run TMS_BENCH_GROWN_ROUNDS (4) times on each store, empty and grown in
 * turn (ABBA, so a drift of the machine's load weighs on both alike); the medians are compared,
 * rates and CPU time per message. Target: the grown store within 10% of the empty one.
 *
 * Delivery checks and template sync are off in every gateway here (both would call the platform
 * for the grown workspaces' sender accounts, which the simulator does not know).
 */
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import pino from 'pino';
import { Pool } from 'undici';
import { parseConfig } from '../src/config/config.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { connectSenderAccount } from '../src/services/admin/sender-accounts.ts';
import { registerTemplate } from '../src/services/admin/templates.ts';
import { topUp } from '../src/services/admin/wallets.ts';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../src/services/demo.ts';
import { openSqliteDatabase } from '../src/store/sqlite-driver.ts';
import { checkMessagePage, messageReads, objectOf, percentile, type Read } from './console-reads.ts';
import { growStore, postgresSink, seedBenchWorkspace, sqliteSink, vietnamMidnight, type Grown, type HistoryPlan, type SeededWorkspace } from './grown-store-data.ts';
import { runLoad, singleSendShape, type AcceptedIds } from './load.ts';
import { benchGatewayEnvironment, freePort, lastLines, neutralEnvironment, readCpuSeconds, spawnChild, startServer, type Child } from './processes.ts';
import { fmt } from './report.ts';
import { checkPostgres, checkSqlite } from './verify.ts';
import type * as Harness from '../test/harness.ts';

export const GROWN_STORE_SCENARIOS = [
  { id: 'grown-store-sqlite', store: 'sqlite' },
  { id: 'grown-store-postgres', store: 'postgres' },
] as const;

export type GrownStoreScenario = (typeof GROWN_STORE_SCENARIOS)[number];

/** p99 targets, in milliseconds. */
export const GROWN_TARGETS = { listP99Ms: 20, deepOffsetP99Ms: 50, byIdP99Ms: 5, slowdownShare: 0.1 } as const;

export const GROWN_PARTS = ['reads', 'dispatch', 'acceptance'] as const;
export type GrownPart = (typeof GROWN_PARTS)[number];

export interface GrownStoreContext {
  root: string;
  harness: typeof Harness;
  /** Messages in all, and in the busiest workspace. */
  messages: number;
  busiest: number;
  /** Workspaces beside the busiest one. */
  otherWorkspaces: number;
  /** Measured requests per read (after the warm-up). */
  requests: number;
  rounds: number;
  /** Which parts to run (a development run may want one). */
  parts: ReadonlySet<GrownPart>;
  dispatchMessages: number;
  dispatchTimeoutSeconds: number;
  acceptSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** Leave the databases in place afterwards (to read query plans in them), and say where. */
  keepDatabase: boolean;
  extraEnv: Record<string, string>;
  nodeArgs: string[];
  say(text: string): void;
}

export interface GrownReadTiming {
  query: string;
  /** The path asked (the first of the values it rotates through). */
  path: string;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Rows in the last answer. */
  rows: number | null;
  targetMs: number;
  pass: boolean | null;
}

/** One measured run on one store (empty or grown). */
export interface GrownRun {
  store: 'empty' | 'grown';
  /** Requests (acceptance) or messages (dispatch) per second. */
  perSecond: number;
  /** CPU time of the gateway process(es) per request or message, µs. */
  cpuUs: number | null;
  p99Ms: number | null;
}

export interface GrownComparison {
  empty: GrownRun[];
  grown: GrownRun[];
  /** Medians, and grown ÷ empty. */
  emptyPerSecond: number;
  grownPerSecond: number;
  rateRatio: number;
  emptyCpuUs: number | null;
  grownCpuUs: number | null;
  cpuRatio: number | null;
}

export interface GrownStoreResult {
  id: string;
  store: 'sqlite' | 'postgres';
  messages: number;
  busiest: number;
  /** Rows written while growing the store, per table. */
  grown: Record<string, number>;
  growSeconds: number;
  growPhases: string;
  reads: GrownReadTiming[];
  readPeakRssMb: number | null;
  acceptance: GrownComparison | null;
  dispatch: GrownComparison | null;
  problems: string[];
}

const WARMUP_REQUESTS = 20;
const DISPATCH_TEMPLATE_ID = '250002';
const BATCH = 500;
const ACCEPT_CONCURRENCY = 4;
/** The single sends' template: the parameters bench/load.ts fills (name, code). */
const SEND_TEMPLATE_ID = 'grown-single-sends';
const DEEP_OFFSET = 10_000;

interface SeededStore {
  busiest: SeededWorkspace;
  others: SeededWorkspace[];
}

/** The same workspaces in both databases: the busiest (3 templates, 2 OAs, the demo OA, the single sends' template) and the others. */
async function seedStore(env: Record<string, string>, stamp: string, otherWorkspaces: number): Promise<SeededStore> {
  const runtime = await createRuntime(parseConfig(env), { log: pino({ level: 'silent' }) });
  try {
    const ctx = runtime.contextFor({ kind: 'operator' });
    const dailyQuota = 1_000_000_000;
    const busiest = await seedBenchWorkspace(runtime, { name: 'bench grown: the busiest workspace', stamp, index: 0, templateCount: 3, oaCount: 2, dailyQuota });
    const others: SeededWorkspace[] = [];
    for (let index = 1; index <= otherWorkspaces; index += 1) others.push(await seedBenchWorkspace(runtime, { name: `bench grown: workspace ${index}`, stamp, index, templateCount: 1, oaCount: 1, dailyQuota }));
    const { oa_id: demoOaId, ...demoAccount } = DEMO_SENDER_ACCOUNT;
    await connectSenderAccount({ ctx, input: { ...demoAccount, oa_id: demoOaId, workspaceId: busiest.workspaceId, daily_quota: dailyQuota, verify: false } });
    const dispatchTemplate = DEMO_TEMPLATES.find((template) => template.template_id === DISPATCH_TEMPLATE_ID)!;
    await registerTemplate({ ctx, input: { ...dispatchTemplate, oa_id: demoOaId, workspaceId: busiest.workspaceId, verify: false } });
    await registerTemplate({
      ctx,
      input: {
        workspaceId: busiest.workspaceId,
        template_id: SEND_TEMPLATE_ID,
        name: 'Bench single sends',
        status: 'ENABLE',
        template_type: 1,
        oa_id: busiest.templates[0]!.oaId,
        preview_url: 'https://example.com/preview',
        params: [
          { name: 'name', type: 'STRING', required: true, min_length: 1, max_length: 30 },
          { name: 'code', type: 'STRING', required: true, min_length: 1, max_length: 10 },
        ],
        price: 300,
        verify: false,
      },
    });
    return { busiest, others };
  } finally {
    await runtime.close();
  }
}

/** After growing (which sets each balance from its history): money for the runs, as an operator's top-up. */
async function topUpBusiest(env: Record<string, string>, workspaceId: string): Promise<void> {
  const runtime = await createRuntime(parseConfig(env), { log: pino({ level: 'silent' }) });
  try {
    await topUp({ ctx: runtime.contextFor({ kind: 'operator' }), input: { workspaceId, amount: 1_000_000_000_000, note: 'bench runs' } });
  } finally {
    await runtime.close();
  }
}

/** The other workspaces' sizes: the n-th gets a share of 1/(n+1) of what the busiest leaves. */
function planHistories(seeded: SeededStore, messages: number, busiest: number): HistoryPlan[] {
  const rest = Math.max(0, messages - busiest);
  const weights = seeded.others.map((_, index) => 1 / (index + 2));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return [
    { workspace: seeded.busiest, messages: busiest, seed: 1 },
    ...seeded.others.map((workspace, index) => ({ workspace, messages: Math.max(1, Math.round((rest * weights[index]!) / total)), seed: index + 2 })),
  ];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function compare(runs: GrownRun[]): GrownComparison {
  const empty = runs.filter((run) => run.store === 'empty');
  const grown = runs.filter((run) => run.store === 'grown');
  const cpu = (list: GrownRun[]) => (list.every((run) => run.cpuUs !== null) && list.length > 0 ? median(list.map((run) => run.cpuUs!)) : null);
  const emptyPerSecond = median(empty.map((run) => run.perSecond));
  const grownPerSecond = median(grown.map((run) => run.perSecond));
  const emptyCpuUs = cpu(empty);
  const grownCpuUs = cpu(grown);
  return {
    empty,
    grown,
    emptyPerSecond,
    grownPerSecond,
    rateRatio: grownPerSecond / emptyPerSecond,
    emptyCpuUs,
    grownCpuUs,
    cpuRatio: emptyCpuUs !== null && grownCpuUs !== null ? grownCpuUs / emptyCpuUs : null,
  };
}

/** Empty and grown in turn, ABBA: round 0 empty first, round 1 grown first, … */
function roundOrder(round: number): ('empty' | 'grown')[] {
  return round % 2 === 0 ? ['empty', 'grown'] : ['grown', 'empty'];
}

// ---------------------------------------------------------------------------------------------
// Reads

function readsOf(grown: Grown, busiest: SeededWorkspace, busiestMessages: number, now: number): Read[] {
  const iso = (time: number) => new Date(time).toISOString();
  const prefix = '/api/v1/messages';
  const list = (query: string, paths: string[]): Read => ({ query, paths: paths.map((path) => `${prefix}${path}`), check: checkMessagePage });
  const consoleReads = messageReads(prefix, grown, busiest, now).map((read) => ({ ...read, query: read.query.replace(/^messages: /, '') }));
  const byId: Read = {
    query: 'by id (random ids of its history)',
    paths: grown.samples.get(busiest.workspaceId)!.messageIds.map((id) => `${prefix}/${id}`),
    check: (body, path) => {
      const message = objectOf(body, path);
      if (message.msg_id !== path.slice(path.lastIndexOf('/') + 1)) throw new Error(`${path}: answered message ${String(message.msg_id)}`);
      return 1;
    },
  };
  return [
    ...consoleReads.slice(0, 1),
    list('status=delivered (85% of them)', ['?status=delivered']),
    ...consoleReads.slice(1, 8),
    list('from alone (7 days ago)', [`?from=${iso(vietnamMidnight(now, 7))}`]),
    list('to alone (60 days ago)', [`?to=${iso(vietnamMidnight(now, 60))}`]),
    ...consoleReads.slice(8),
    // A development run's workspace may hold fewer messages than the offset skips.
    { query: `offset=${DEEP_OFFSET.toLocaleString('en-US')}`, paths: [`${prefix}?offset=${DEEP_OFFSET}`], check: (body, path) => checkMessagePage(body, path, busiestMessages <= DEEP_OFFSET) },
    byId,
  ];
}

function targetOf(read: Read): number {
  if (read.query.startsWith('offset=')) return GROWN_TARGETS.deepOffsetP99Ms;
  if (read.query.startsWith('by id')) return GROWN_TARGETS.byIdP99Ms;
  return GROWN_TARGETS.listP99Ms;
}

/**
 * A full garbage collection in this process, now: growing the store left millions of dead rows in
 * its heap, and a collection of them during the reads would be timed as the gateway's latency.
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

async function measureReads(url: string, apiKey: string, reads: Read[], requests: number): Promise<GrownReadTiming[]> {
  collectGarbage();
  const pool = new Pool(url, { connections: 1, pipelining: 1 });
  try {
    const get = async (path: string): Promise<{ status: number; text: string; ms: number }> => {
      const started = performance.now();
      const response = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${apiKey}` } });
      const body = await response.body.text();
      return { status: response.statusCode, text: body, ms: performance.now() - started };
    };
    const entries = reads.map((read) => ({ read, rows: null as number | null, samples: [] as number[] }));
    // The reads in turn, each request alone on the connection; the paths of a read in rotation.
    for (let round = 0; round < WARMUP_REQUESTS + requests; round += 1) {
      for (const entry of entries) {
        const path = entry.read.paths[round % entry.read.paths.length]!;
        const answer = await get(path);
        if (answer.status !== 200) throw new Error(`${entry.read.query}: GET ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        entry.rows = entry.read.check(JSON.parse(answer.text) as unknown, path);
        if (round >= WARMUP_REQUESTS) entry.samples.push(answer.ms);
      }
    }
    return entries.map(({ read, rows, samples }) => {
      const sorted = [...samples].sort((a, b) => a - b);
      const targetMs = targetOf(read);
      const p99Ms = percentile(sorted, 0.99);
      return { query: read.query, path: read.paths[0]!, requests: sorted.length, p50Ms: percentile(sorted, 0.5), p99Ms, maxMs: sorted[sorted.length - 1] ?? Number.NaN, rows, targetMs, pass: p99Ms <= targetMs };
    });
  } finally {
    await pool.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Dispatch

async function json(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

async function expectOk(what: string, call: Promise<{ status: number; text: string }>): Promise<string> {
  const answer = await call;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer.text;
}

/** The ZNS simulator in its own process: the demo OA's quota raised, events off, no recipient rules. */
async function startSimulator(root: string): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = spawnChild(root, [join(root, 'packages/zns-sim/bin/tms-zns-sim.js'), '--port', String(port)], neutralEnvironment());
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!child.output().includes('listening on')) {
    if (child.child.exitCode !== null || Date.now() > deadline) {
      await child.stop();
      throw new Error(`simulator not ready: ${child.output()}`);
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
  await expectOk('sim quota', json(`${url}/_control/oas/${DEMO_SENDER_ACCOUNT.oa_id}/quota`, 'PUT', { daily_quota: 100_000_000 }));
  await expectOk('sim events off', json(`${url}/_control/events`, 'PUT', { url: null }));
  await expectOk('sim recipient rules', json(`${url}/_control/recipient-rules`, 'PUT', []));
  return { url, child };
}

/**
 * Reads the dispatch's progress: the round's own messages (the busiest workspace's, created since
 * the round began) still queued, whenever due (a send put back with a backoff is still to do), or
 * held by a worker. It reads them through the index by workspace, status and time, so polling a
 * grown store costs what polling an empty one does. Counting through the workers' partial index
 * by due time instead read the history's queued rows too: 81 ms a poll on the grown PostgreSQL
 * store against 4 on the empty one, with two parallel workers, every 50 ms, on the cores the worker
 * under test needed (dispatch measured 0.62× the empty store's rate that way).
 */
interface Progress {
  pending(): Promise<number>;
  /** The demo OA's messages of the busiest workspace per status, and their distinct provider ids. */
  outcome(): Promise<{ statuses: Record<string, number>; distinctProviderIds: number }>;
  close(): Promise<void>;
}

const PENDING_SQL = `SELECT (SELECT count(*) FROM message_states WHERE workspace_id = $1 AND status = 'queued' AND created_at >= $2)
  + (SELECT count(*) FROM message_states WHERE workspace_id = $1 AND status = 'sending' AND created_at >= $2 AND lease_expires_at IS NOT NULL) AS n`;
const STATUSES_SQL = 'SELECT status, count(*) AS n, count(DISTINCT provider_msg_id) AS distinct_ids FROM message_states WHERE workspace_id = $1 AND oa_id = $2 GROUP BY status';

function outcomeOf(rows: { status: string; n: number | string; distinct_ids: number | string }[]): { statuses: Record<string, number>; distinctProviderIds: number } {
  return {
    statuses: Object.fromEntries(rows.map((row) => [row.status, Number(row.n)])),
    distinctProviderIds: Number(rows.find((row) => row.status === 'sent')?.distinct_ids ?? 0),
  };
}

async function openProgress(database: Harness.TestDatabase, workspaceId: string, createdSince: number): Promise<Progress> {
  if (database.kind === 'sqlite') {
    const db = openSqliteDatabase(join(database.env.TMS_DATA_DIR!, 'tms.sqlite'), { readonly: true });
    const pending = db.prepare(PENDING_SQL.replaceAll('$1', '@workspaceId').replaceAll('$2', '@createdSince'));
    const statuses = db.prepare(STATUSES_SQL.replace('$1', '?').replace('$2', '?'));
    return {
      pending: async () => (pending.get({ workspaceId, createdSince }) as { n: number }).n,
      outcome: async () => outcomeOf(statuses.all(workspaceId, DEMO_SENDER_ACCOUNT.oa_id) as { status: string; n: number; distinct_ids: number }[]),
      close: async () => {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  // The observer keeps to one process: a parallel count would take cores from the worker measured.
  await client.query('SET max_parallel_workers_per_gather = 0');
  return {
    pending: async () => Number((await client.query<{ n: string }>(PENDING_SQL, [workspaceId, createdSince])).rows[0]!.n),
    outcome: async () => outcomeOf((await client.query<{ status: string; n: string; distinct_ids: string }>(STATUSES_SQL, [workspaceId, DEMO_SENDER_ACCOUNT.oa_id])).rows),
    close: async () => {
      await client.end();
    },
  };
}

async function acceptBatches(url: string, apiKey: string, count: number, round: number): Promise<void> {
  const batches = Math.ceil(count / BATCH);
  let next = 0;
  const one = async () => {
    while (next < batches) {
      const batch = next++;
      const size = Math.min(BATCH, count - batch * BATCH);
      const recipients = Array.from({ length: size }, (_, offset) => {
        const n = round * count + batch * BATCH + offset;
        return { phone: `03${String(10_000_000 + (n % 89_999_999)).padStart(8, '0')}`, template_data: { otp: String(100_000 + (n % 900_000)) } };
      });
      const answer = await json(`${url}/api/v1/messages/batch`, 'POST', { template_id: DISPATCH_TEMPLATE_ID, recipients }, { authorization: `Bearer ${apiKey}` });
      if (answer.status !== 202 || !answer.text.includes(`"accepted":${size}`)) throw new Error(`batch ${batch}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: ACCEPT_CONCURRENCY }, one));
}

interface StoreUnderTest {
  kind: 'empty' | 'grown';
  database: Harness.TestDatabase;
  env: Record<string, string>;
  busiest: SeededWorkspace;
  /** Messages of the demo OA sent so far (all rounds). */
  dispatched: number;
  accepted: AcceptedIds;
  /** Its own simulator: the platform rotates an app's refresh token on use, and each store keeps its own. */
  sim: { url: string; child: Child } | null;
}

async function dispatchRound(context: GrownStoreContext, target: StoreUnderTest, round: number): Promise<GrownRun> {
  target.sim ??= await startSimulator(context.root);
  const simUrl = target.sim.url;
  const env = { ...target.env, ZNS_OAUTH_URL: simUrl, ZNS_API_URL: simUrl };
  const script = join(context.root, 'packages/gateway/bin/tms.js');
  const api = await startServer({ cwd: context.root, script, args: ['api'], nodeArgs: context.nodeArgs, env, port: await freePort() });
  const acceptedSince = Date.now();
  try {
    await acceptBatches(api.url, target.busiest.apiKey, context.dispatchMessages, round);
  } catch (error) {
    await api.stop();
    throw error;
  }
  const apiCode = await api.stop();
  if (apiCode !== 0) throw new Error(`api exited with ${apiCode}`);
  const progress = await openProgress(target.database, target.busiest.workspaceId, acceptedSince);
  let worker: Child | null = null;
  let run: GrownRun;
  try {
    if ((await progress.pending()) !== context.dispatchMessages) throw new Error(`expected ${context.dispatchMessages} messages due before the worker starts`);
    const started = performance.now();
    worker = spawnChild(context.root, [...context.nodeArgs, script, 'worker'], { ...env, PORT: '0' });
    const pid = worker.child.pid!;
    let cpuSeconds: number | null = null;
    const deadline = started + context.dispatchTimeoutSeconds * 1000;
    for (;;) {
      if ((await progress.pending()) === 0) break;
      if (worker.child.exitCode !== null) throw new Error(`the worker exited early (${worker.child.exitCode}):\n${lastLines(worker.output())}`);
      if (performance.now() > deadline) throw new Error(`dispatch timed out after ${context.dispatchTimeoutSeconds} s`);
      cpuSeconds = readCpuSeconds(pid);
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    cpuSeconds = readCpuSeconds(pid) ?? cpuSeconds;
    target.dispatched += context.dispatchMessages;
    const outcome = await progress.outcome();
    const sent = outcome.statuses.sent ?? 0;
    if (sent !== target.dispatched || outcome.distinctProviderIds !== sent) {
      throw new Error(`${JSON.stringify(outcome.statuses)} with ${outcome.distinctProviderIds} distinct provider ids, for ${target.dispatched} dispatched; the worker said:\n${worker.output().split('\n').slice(-8).join('\n')}`);
    }
    run = { store: target.kind, perSecond: context.dispatchMessages / seconds, cpuUs: cpuSeconds === null ? null : (cpuSeconds * 1e6) / context.dispatchMessages, p99Ms: null };
  } catch (error) {
    await worker?.stop();
    await progress.close();
    throw error;
  }
  const workerCode = await worker.stop();
  await progress.close();
  if (workerCode !== 0) throw new Error(`worker exited with ${workerCode}: ${worker.output().split('\n').slice(-8).join('\n')}`);
  return run;
}

// ---------------------------------------------------------------------------------------------
// Acceptance

async function acceptanceRound(context: GrownStoreContext, target: StoreUnderTest): Promise<GrownRun> {
  const server = await startServer({ cwd: context.root, script: join(context.root, 'packages/gateway/bin/tms.js'), args: ['api'], nodeArgs: context.nodeArgs, env: target.env, port: await freePort() });
  try {
    const shape = singleSendShape({ url: server.url, apiKey: target.busiest.apiKey, templateId: SEND_TEMPLATE_ID, connections: context.connections, expectMsgId: true });
    const warmup = await runLoad(shape, context.warmupSeconds, target.accepted);
    const cpuBefore = server.cpuSeconds();
    const run = await runLoad(shape, context.acceptSeconds, target.accepted);
    const cpuAfter = server.cpuSeconds();
    const bad = warmup.tally.bad + run.tally.bad + warmup.result.errors + run.result.errors;
    if (bad > 0) throw new Error(`${bad} bad answers or errors, e.g. ${[...warmup.tally.samples, ...run.tally.samples].slice(0, 2).join(' | ')}`);
    const ended = server.endedEarly();
    if (ended) throw new Error(`the gateway ${ended}`);
    return {
      store: target.kind,
      perSecond: run.requestsPerSecond,
      cpuUs: cpuBefore !== null && cpuAfter !== null && run.tally.good > 0 ? ((cpuAfter - cpuBefore) * 1e6) / run.tally.good : null,
      p99Ms: run.result.latency.p99,
    };
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runGrownStore(scenario: GrownStoreScenario, context: GrownStoreContext): Promise<GrownStoreResult> {
  const { harness, say } = context;
  const result: GrownStoreResult = {
    id: scenario.id,
    store: scenario.store,
    messages: context.messages,
    busiest: context.busiest,
    grown: {},
    growSeconds: 0,
    growPhases: '',
    reads: [],
    readPeakRssMb: null,
    acceptance: null,
    dispatch: null,
    problems: [],
  };
  const storeName = scenario.store === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  say(`${scenario.id}: ${context.messages.toLocaleString('en-US')} messages (${context.busiest.toLocaleString('en-US')} in the busiest of ${context.otherWorkspaces + 1} workspaces) on ${storeName}, against an empty store`);
  const targets: StoreUnderTest[] = [];
  try {
    const stamp = String(Date.now() % 1e8).padStart(8, '0');
    for (const kind of ['grown', 'empty'] as const) {
      const database = await context.harness.createTestDatabase(scenario.store);
      const env = benchGatewayEnvironment(harness, database, { TMS_TEMPLATE_SYNC_MS: '0', TMS_DELIVERY_CHECK_AFTER_MS: '0', ...context.extraEnv });
      const seeded = await seedStore(env, stamp, context.otherWorkspaces);
      targets.push({ kind, database, env, busiest: seeded.busiest, dispatched: 0, accepted: [], sim: null });
      if (kind === 'empty') {
        await topUpBusiest(env, seeded.busiest.workspaceId);
        continue;
      }
      const now = Date.now();
      const growStarted = performance.now();
      const sink = scenario.store === 'sqlite' ? sqliteSink(join(database.env.TMS_DATA_DIR!, 'tms.sqlite')) : await postgresSink(database.env.DATABASE_URL!);
      let grown: Grown;
      try {
        grown = await growStore(sink, planHistories(seeded, context.messages, context.busiest), now, {
          backlog: false,
          reportEvery: 1,
          reportWithinDays: 29,
          idempotencyShare: 1 / 3,
          interleave: true,
        });
        const finishStarted = performance.now();
        await sink.finish();
        result.growPhases = `rows ${grown.rowsSeconds.toFixed(1)} s, indexes ${grown.indexSeconds.toFixed(1)} s, ${sink.finishing} ${((performance.now() - finishStarted) / 1000).toFixed(1)} s`;
      } finally {
        await sink.close();
      }
      await topUpBusiest(env, seeded.busiest.workspaceId);
      result.growSeconds = (performance.now() - growStarted) / 1000;
      result.grown = { ...grown.rows };
      say(`  grown in ${result.growSeconds.toFixed(1)} s (${result.growPhases}): ${Object.entries(result.grown).map(([table, rows]) => `${rows.toLocaleString('en-US')} ${table}`).join(', ')}`);

      if (!context.parts.has('reads')) continue;
      const server = await startServer({ cwd: context.root, script: join(context.root, 'packages/gateway/bin/tms.js'), args: ['api'], nodeArgs: context.nodeArgs, env, port: await freePort() });
      try {
        result.reads = await measureReads(server.url, seeded.busiest.apiKey, readsOf(grown, seeded.busiest, context.busiest, now), context.requests);
        result.readPeakRssMb = server.peakRssMb();
        const ended = server.endedEarly();
        if (ended) throw new Error(`the gateway ${ended}, during the reads`);
      } finally {
        await server.stop();
      }
      for (const timing of result.reads) say(`  ${timing.query}: p50 ${fmt(timing.p50Ms, 1)} ms, p99 ${fmt(timing.p99Ms, 1)} ms, max ${fmt(timing.maxMs, 1)} ms (target ${timing.targetMs} ms)`);
    }
    const byKind = (kind: 'empty' | 'grown') => targets.find((target) => target.kind === kind)!;

    const dispatchRuns: GrownRun[] = [];
    for (let round = 0; round < (context.parts.has('dispatch') ? context.rounds : 0); round += 1) {
      for (const kind of roundOrder(round)) {
        const run = await dispatchRound(context, byKind(kind), round);
        say(`  dispatch, ${kind} store: ${fmt(run.perSecond)} messages/s, ${fmt(run.cpuUs)} µs worker CPU per message`);
        dispatchRuns.push(run);
      }
    }
    if (dispatchRuns.length > 0) result.dispatch = compare(dispatchRuns);
    for (const target of targets) {
      if (!target.sim) continue;
      const stats = JSON.parse(await expectOk('sim stats', json(`${target.sim!.url}/_control/stats`, 'GET'))) as { sends: { accepted: number; duplicate_accepts: number } };
      if (stats.sends.duplicate_accepts > 0) result.problems.push(`DUPLICATE SENDS: ${stats.sends.duplicate_accepts} extra accepts at the ${target.kind} store's simulator`);
      if (stats.sends.accepted !== target.dispatched) result.problems.push(`the ${target.kind} store's simulator accepted ${stats.sends.accepted} sends for ${target.dispatched} messages`);
    }

    const acceptanceRuns: GrownRun[] = [];
    for (let round = 0; round < (context.parts.has('acceptance') ? context.rounds : 0); round += 1) {
      for (const kind of roundOrder(round)) {
        const run = await acceptanceRound(context, byKind(kind));
        say(`  single sends, ${kind} store: ${fmt(run.perSecond)} requests/s, ${fmt(run.cpuUs)} µs server CPU per request, p99 ${fmt(run.p99Ms)} ms`);
        acceptanceRuns.push(run);
      }
    }
    if (acceptanceRuns.length > 0) result.acceptance = compare(acceptanceRuns);
    for (const target of targets) {
      const check = scenario.store === 'sqlite' ? checkSqlite(target.database.env.TMS_DATA_DIR!, target.accepted) : await checkPostgres(target.database.env.DATABASE_URL!, target.database.env.DATABASE_URL!, target.accepted);
      if (check.missing > 0) result.problems.push(`LOST MESSAGES: ${check.missing} msg_ids answered with 202 are not in the ${target.kind} store`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    result.problems.push(`did not complete: ${message.split('\n').slice(0, 16).join('\n')}`);
  } finally {
    for (const target of targets) {
      await target.sim?.child.stop();
      if (context.keepDatabase && target.kind === 'grown') say(`  kept the grown database: ${target.database.env.DATABASE_URL ?? join(target.database.env.TMS_DATA_DIR!, 'tms.sqlite')}`);
      else await target.database.drop();
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Report

function table(header: string[], rows: string[][], leftColumns: number): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((cells) => cells[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column < leftColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export function grownStoreTable(results: GrownStoreResult[]): string {
  const reads = table(
    ['store', 'read', 'rows', 'p50 ms', 'p99 ms', 'max ms', 'target', 'result'],
    results.flatMap((result) =>
      result.reads.map((timing) => [result.store, timing.query, fmt(timing.rows), fmt(timing.p50Ms, 1), fmt(timing.p99Ms, 1), fmt(timing.maxMs, 1), `p99 ≤ ${timing.targetMs} ms`, timing.pass === null ? 'n/a' : timing.pass ? 'PASS' : 'FAIL']),
    ),
    2,
  );
  const comparisons = table(
    ['store', 'figure', 'empty store', 'grown store', 'grown ÷ empty', 'CPU µs/msg empty', 'CPU µs/msg grown', 'CPU grown ÷ empty', 'runs each'],
    results.flatMap((result) =>
      (
        [
          ['single sends, requests/s', result.acceptance],
          ['dispatch, messages/s', result.dispatch],
        ] as const
      )
        .filter(([, comparison]) => comparison !== null)
        .map(([figure, comparison]) => [
          result.store,
          figure,
          fmt(comparison!.emptyPerSecond),
          fmt(comparison!.grownPerSecond),
          fmt(comparison!.rateRatio, 2),
          fmt(comparison!.emptyCpuUs),
          fmt(comparison!.grownCpuUs),
          fmt(comparison!.cpuRatio, 2),
          String(comparison!.grown.length),
        ]),
    ),
    2,
  );
  const grownRows = results.map((result) => `${result.store}: grown in ${result.growSeconds.toFixed(0)} s (${result.growPhases}): ${Object.entries(result.grown).map(([name, rows]) => `${rows.toLocaleString('en-US')} ${name}`).join(', ')}`);
  return [...grownRows, '', reads, '', comparisons].join('\n');
}

export interface GrownStoreTarget {
  text: string;
  met: boolean | null;
}

export function grownStoreTargets(results: GrownStoreResult[]): GrownStoreTarget[] {
  const targets: GrownStoreTarget[] = [];
  for (const result of results) {
    const valid = result.problems.length === 0;
    const size = `${result.messages.toLocaleString('en-US')} messages, ${result.busiest.toLocaleString('en-US')} in the workspace read`;
    const group = (name: string, filter: (timing: GrownReadTiming) => boolean, targetMs: number) => {
      const timings = result.reads.filter(filter);
      const worst = timings.reduce<GrownReadTiming | null>((slowest, timing) => (slowest === null || timing.p99Ms > slowest.p99Ms ? timing : slowest), null);
      targets.push({
        text: `${result.id}: ${name} p99 ≤ ${targetMs} ms on ${size} (${worst ? `slowest ${fmt(worst.p99Ms, 1)} ms, ${worst.query}` : 'not measured'})`,
        met: worst === null || !valid ? (valid ? null : false) : timings.every((timing) => timing.pass === true),
      });
    };
    group('every message list', (timing) => timing.targetMs === GROWN_TARGETS.listP99Ms, GROWN_TARGETS.listP99Ms);
    group(`offset=${DEEP_OFFSET}`, (timing) => timing.targetMs === GROWN_TARGETS.deepOffsetP99Ms, GROWN_TARGETS.deepOffsetP99Ms);
    group('a message by id', (timing) => timing.targetMs === GROWN_TARGETS.byIdP99Ms, GROWN_TARGETS.byIdP99Ms);
    for (const [name, comparison] of [
      ['single sends', result.acceptance],
      ['dispatch', result.dispatch],
    ] as const) {
      const floor = 1 - GROWN_TARGETS.slowdownShare;
      targets.push({
        text: `${result.id}: ${name} on the grown store ≥ ${floor.toFixed(2)}× the empty store's rate (${comparison ? `${fmt(comparison.grownPerSecond)} vs ${fmt(comparison.emptyPerSecond)}/s, ${fmt(comparison.rateRatio, 2)}×; CPU per message ${fmt(comparison.cpuRatio, 2)}×` : 'not measured'})`,
        met: comparison && valid ? comparison.rateRatio >= floor : valid ? null : false,
      });
    }
  }
  return targets;
}

