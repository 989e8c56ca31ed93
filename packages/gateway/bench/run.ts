/**
 * `npm run bench`: the acceptance path's throughput, on this machine, in one run.
 *
 *   1. ceiling: a bare Fastify app validating the same body as /messages/send, answering 202;
 *   2. single sends from one workspace, 50 connections, on SQLite and on PostgreSQL;
 *   3. batches of 500 recipients, fewer connections, on SQLite and on PostgreSQL.
 *
 * The ceiling is measured right before the single sends of each store, and each store's
 * "% of ceiling" is against its own ceiling: on a shared machine the two run under the same load.
 *
 * Every server under test is a child process, started afresh per scenario (so its peak RSS is the
 * scenario's own) on a fresh database. Every answer is checked, and afterwards every msg_id that
 * was answered with a 202 must be in the database. PostgreSQL is skipped, with a note, when
 * TMS_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) is unreachable.
 *
 * Settings (environment): TMS_BENCH_SECONDS (10) and TMS_BENCH_WARMUP_SECONDS (2) per scenario,
 * TMS_BENCH_CONNECTIONS (50) for single sends, TMS_BENCH_BATCH_CONNECTIONS (8) for batches,
 * TMS_BENCH_ONLY (comma-separated scenario ids: ceiling-sqlite, single-sqlite, batch-sqlite, ceiling-postgres,
 * single-postgres, batch-postgres; a single-sends scenario brings its ceiling along),
 * TMS_BENCH_CPU_PROF=1 (gateway children write .cpuprofile files to bench-results/profiles/),
 * TMS_BENCH_FROM_SOURCES=1 (run the gateway from its TypeScript sources instead of building it first),
 * TMS_BENCH_GATEWAY_ENV (extra gateway variables, e.g. "TMS_PG_POOL_SIZE=20 TMS_LOG_LEVEL=error"),
 * TMS_BENCH_NODE_ARGS (extra node flags for the gateway children, e.g. "--import ./my-probe.mjs").
 *
 * Dispatch (see dispatch.ts): dispatch-sqlite-0ms, dispatch-sqlite-50ms, dispatch-postgres-1w-0ms,
 * dispatch-postgres-1w-50ms, dispatch-postgres-2w-0ms, dispatch-postgres-2w-50ms: messages/s from
 * `queued` to `sent` through the ZNS simulator. TMS_BENCH_DISPATCH_MESSAGES (50000) messages per
 * scenario, TMS_BENCH_DISPATCH_TIMEOUT_SECONDS (120) at most for the workers to send them all.
 *
 * Webhooks (see webhooks.ts): webhooks-deliveries-sqlite, webhooks-deliveries-postgres (deliveries/s
 * from one `tms worker` to a receiver that answers at once; TMS_BENCH_WEBHOOK_DELIVERIES, 50000) and
 * webhooks-loop-sqlite, webhooks-loop-postgres (TMS_BENCH_LOOP_MESSAGES, 20000, through the API on
 * `tms start` to verified reports; webhooks-loop-postgres-split on `tms api` + `tms worker`; TMS_BENCH_LOOP_BATCH recipients per request, 1 = single sends;
 * TMS_BENCH_LOOP_CONNECTIONS, 50; each loop runs cold, then warm on the same processes). TMS_BENCH_WEBHOOK_TIMEOUT_SECONDS (180) at most per scenario.
 *
 * TMS vs Kannel (see loop-vs-kannel.ts, kannel.ts): loop-vs-kannel, TMS_BENCH_LOOP_PAIRS (3) interleaved
 * pairs of the SQLite loop and Kannel 1.4.5 (sendsms at TMS_BENCH_KANNEL_CONNECTIONS, 50, dlr-mask=1;
 * TMS_BENCH_KANNEL_IMMEDIATE_REPLY=1 lets smsbox answer before bearerbox has the message),
 * TMS_BENCH_LOOP_MESSAGES each, cold and warm; skipped with a note when Kannel is not installed.
 *
 * Scaling (see scaling.ts): scaling-postgres, TMS_BENCH_SCALING_PROCESSES (3) `tms api` processes on
 * one PostgreSQL database and ten workspaces: single sends from one workspace and from ten, over one
 * process and over all, with the lock waits sampled from pg_stat_activity and pg_locks.
 *
 * Grown store (see grown-store.ts): grown-store-sqlite, grown-store-postgres: list and by-id reads
 * on a store of TMS_BENCH_GROWN_MESSAGES (5000000) messages, TMS_BENCH_GROWN_BUSIEST (1000000) in
 * the workspace read and the rest over TMS_BENCH_GROWN_WORKSPACES (19) others
 * (TMS_BENCH_GROWN_REQUESTS, 200, per read); single sends and dispatch
 * (TMS_BENCH_GROWN_DISPATCH_MESSAGES, 20000) on it and on an empty store, TMS_BENCH_GROWN_ROUNDS (4)
 * runs each; TMS_BENCH_GROWN_KEEP_DATABASE=1 keeps the grown databases.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { BATCH_SIZE, batchShape, runLoad, singleSendShape, type AcceptedIds, type LoadRun, type LoadShape } from './load.ts';
import { DISPATCH_SCENARIOS, dispatchTable, dispatchTargets, runDispatch, type DispatchResult } from './dispatch.ts';
import { benchGatewayEnvironment, freePort, lastLines, localDatabaseServer, meterProgramCpu, neutralEnvironment, startServer, type ServerProcess } from './processes.ts';
import { evaluateTargets, markdown, targetLines, textTable, type ScenarioKind, type ScenarioResult, type StoreName } from './report.ts';
import { checkPostgres, checkSqlite, type StoreCheck } from './verify.ts';
import { describeStoreWrites, startStoreWriteMeter, storeWriteSource, type StoreWriteSource } from './store-writes.ts';
import { CONSOLE_READ_SCENARIOS, consoleReadsTable, consoleReadsTargets, runConsoleReads, type ConsoleReadsResult } from './console-reads.ts';
import { WEBHOOK_SCENARIOS, runWebhookScenario, webhookTable, webhookTargets, type WebhookResult } from './webhooks.ts';
import { LOOP_VS_KANNEL_ID, loopVsKannelMarkdown, loopVsKannelTargets, loopVsKannelText, runLoopVsKannel, type LoopVsKannelResult } from './loop-vs-kannel.ts';
import { GROWN_PARTS, GROWN_STORE_SCENARIOS, grownStoreTable, grownStoreTargets, runGrownStore, type GrownStoreResult } from './grown-store.ts';
import { SCALING_SCENARIOS, runScaling, scalingTable, scalingTargets, type ScalingResult } from './scaling.ts';
import type { TestGateway } from '../test/harness.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const RUN_TS = join(ROOT, 'packages/gateway/bin/run-ts.js');
const TMS = join(ROOT, 'packages/gateway/bin/tms.js');
const CEILING = join(ROOT, 'packages/gateway/bench/ceiling-server.ts');
const RESULTS_DIR = join(ROOT, 'bench-results');

function integerSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

const SECONDS = integerSetting('TMS_BENCH_SECONDS', 10);
const WARMUP_SECONDS = integerSetting('TMS_BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = integerSetting('TMS_BENCH_CONNECTIONS', 50);
const BATCH_CONNECTIONS = integerSetting('TMS_BENCH_BATCH_CONNECTIONS', 8);
const ONLY = new Set((process.env.TMS_BENCH_ONLY ?? '').split(',').map((id) => id.trim()).filter(Boolean));
const CPU_PROFILE = process.env.TMS_BENCH_CPU_PROF === '1';
const EXTRA_GATEWAY_ENV = Object.fromEntries(
  (process.env.TMS_BENCH_GATEWAY_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const EXTRA_NODE_ARGS = (process.env.TMS_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const DISPATCH_MESSAGES = integerSetting('TMS_BENCH_DISPATCH_MESSAGES', 50_000);
const DISPATCH_TIMEOUT_SECONDS = integerSetting('TMS_BENCH_DISPATCH_TIMEOUT_SECONDS', 120);
const POSTGRES_URL = process.env.TMS_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const WEBHOOK_DELIVERIES = integerSetting('TMS_BENCH_WEBHOOK_DELIVERIES', 50_000);
const LOOP_MESSAGES = integerSetting('TMS_BENCH_LOOP_MESSAGES', 20_000);
const LOOP_BATCH = integerSetting('TMS_BENCH_LOOP_BATCH', 1);
const LOOP_CONNECTIONS = integerSetting('TMS_BENCH_LOOP_CONNECTIONS', 50);
const WEBHOOK_TIMEOUT_SECONDS = integerSetting('TMS_BENCH_WEBHOOK_TIMEOUT_SECONDS', 180);
const CONSOLE_MESSAGES = integerSetting('TMS_BENCH_CONSOLE_MESSAGES', 1_000_000);
const CONSOLE_REQUESTS = integerSetting('TMS_BENCH_CONSOLE_REQUESTS', 200);

// The harness reads its PostgreSQL URL when it is loaded: point it at the benchmark's first.
process.env.TMS_TEST_DATABASE_URL = POSTGRES_URL;
const harness = await import('../test/harness.ts');

const say = (text: string) => process.stderr.write(`${text}\n`);

async function postgresReachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function emptyResult(id: string, kind: ScenarioKind, store: StoreName, connections: number): ScenarioResult {
  return {
    id,
    kind,
    store,
    connections,
    seconds: 0,
    requests: 0,
    requestsPerSecond: 0,
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    recipientsPerSecond: null,
    percentOfCeiling: null,
    cpuRatioToCeiling: null,
    peakRssMb: null,
    serverCpuCores: null,
    serverCpuUsPerRequest: null,
    databaseCpuUsPerRequest: null,
    storeWrites: null,
    errors: 0,
    errorDetail: { non2xx: 0, badAnswers: 0, connectionErrors: 0, timeouts: 0, statuses: {}, samples: [] },
    storeCheck: null,
    problems: [],
  };
}

/** The unit a scenario's store writes are given per. */
function kindUnit(kind: ScenarioKind): string {
  return kind === 'batch' ? `batch of ${BATCH_SIZE}` : 'request';
}

/** Warm-up (not counted, but checked) and the measured run, into `result`. */
async function measure(
  result: ScenarioResult,
  server: ServerProcess,
  shape: LoadShape,
  ids: AcceptedIds | null,
  meters: { databaseServer: string | null; storeWrites: StoreWriteSource | null } = { databaseServer: null, storeWrites: null },
): Promise<void> {
  say(`  warm-up ${WARMUP_SECONDS} s, then ${SECONDS} s at ${shape.connections} connections`);
  const runs: LoadRun[] = [await runLoad(shape, WARMUP_SECONDS, ids)];
  const databaseMeter = meters.databaseServer ? meterProgramCpu(meters.databaseServer) : null;
  const storeWriteMeter = meters.storeWrites ? await startStoreWriteMeter(meters.storeWrites) : null;
  const cpuBefore = server.cpuSeconds();
  const run = await runLoad(shape, SECONDS, ids);
  const cpuAfter = server.cpuSeconds();
  const databaseSeconds = databaseMeter?.stop() ?? null;
  // Requests in flight when the run ends may be written before this read without being counted: at most one per connection.
  result.storeWrites = (await storeWriteMeter?.stop()) ?? null;
  if (storeWriteMeter) say(`  ${describeStoreWrites(result.storeWrites, run.tally.good, kindUnit(result.kind))}`);
  runs.push(run);
  if (cpuBefore !== null && cpuAfter !== null && run.tally.good > 0) {
    result.serverCpuCores = (cpuAfter - cpuBefore) / run.seconds;
    result.serverCpuUsPerRequest = ((cpuAfter - cpuBefore) * 1e6) / run.tally.good;
  }
  if (databaseSeconds !== null && run.tally.good > 0) result.databaseCpuUsPerRequest = (databaseSeconds * 1e6) / run.tally.good;
  result.seconds = run.seconds;
  result.requests = run.tally.good;
  result.requestsPerSecond = run.requestsPerSecond;
  result.p50Ms = run.result.latency.p50;
  result.p99Ms = run.result.latency.p99;
  const detail = result.errorDetail;
  for (const { result: cannon, tally } of runs) {
    detail.non2xx += cannon.non2xx;
    detail.badAnswers += tally.bad;
    detail.connectionErrors += cannon.errors - cannon.timeouts;
    detail.timeouts += cannon.timeouts;
    for (const [status, count] of Object.entries(tally.statuses)) detail.statuses[status] = (detail.statuses[status] ?? 0) + count;
    detail.samples.push(...tally.samples.slice(0, 5 - detail.samples.length));
  }
  result.errors = detail.badAnswers + detail.connectionErrors + detail.timeouts;
  if (result.errors > 0) result.problems.push(`${result.errors} errors (statuses ${JSON.stringify(detail.statuses)})`);
  if (result.kind === 'batch') result.recipientsPerSecond = run.requestsPerSecond * BATCH_SIZE;
}

async function runCeiling(store: 'sqlite' | 'postgres'): Promise<ScenarioResult> {
  const result = emptyResult(`ceiling-${store}`, 'ceiling', store, CONNECTIONS);
  say(`${result.id}: bare Fastify, same body schema, 202 with a fixed body (the ceiling for single sends on ${store})`);
  const server = await startServer({ cwd: ROOT, script: RUN_TS, args: [CEILING], env: neutralEnvironment(), port: await freePort() });
  try {
    await measure(result, server, singleSendShape({ url: server.url, apiKey: null, templateId: 'tpl_ceiling', connections: CONNECTIONS, expectMsgId: false }), null);
    result.peakRssMb = server.peakRssMb();
    const ended = server.endedEarly();
    if (ended) result.problems.push(`the server ${ended}, during the run:\n${lastLines(server.output())}`);
  } finally {
    await server.stop();
  }
  return result;
}

async function runGateway(id: string, kind: 'single' | 'batch', store: 'sqlite' | 'postgres'): Promise<ScenarioResult> {
  const connections = kind === 'single' ? CONNECTIONS : BATCH_CONNECTIONS;
  const result = emptyResult(id, kind, store, connections);
  say(`${id}: ${kind === 'single' ? 'single sends' : `batches of ${BATCH_SIZE}`} on ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`);
  const database = await harness.createTestDatabase(store);
  const ids: AcceptedIds = [];
  let server: ServerProcess | null = null;
  try {
    const env = benchGatewayEnvironment(harness, database, EXTRA_GATEWAY_ENV);
    const profileDir = join(RESULTS_DIR, 'profiles', id);
    if (CPU_PROFILE) mkdirSync(profileDir, { recursive: true });
    server = await startServer({
      cwd: ROOT,
      script: TMS,
      args: ['api'],
      nodeArgs: [...(CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...EXTRA_NODE_ARGS],
      env,
      port: await freePort(),
    });
    const url = server.url;
    const adminToken = env.TMS_ADMIN_TOKEN!;
    // seedWorkspace only calls the operator API; give it just that.
    const operator = { admin: (method: string, path: string, body?: unknown) => harness.httpRequest(url, method, `/admin/v1${path}`, { key: adminToken, body }) };
    const seeded = await harness.seedWorkspace(operator as Pick<TestGateway, 'admin'> as TestGateway, {
      balance: 1_000_000_000_000,
      dailyQuota: 1_000_000_000,
      scopes: ['messages:send'],
      name: `bench ${id}`,
    });
    const shape =
      kind === 'single'
        ? singleSendShape({ url, apiKey: seeded.apiKey, templateId: seeded.templateId, connections, expectMsgId: true })
        : batchShape({ url, apiKey: seeded.apiKey, templateId: seeded.templateId, connections, pool: 32 });
    // The PostgreSQL server's share of an acceptance, beside the gateway's (a lower bound: see meterProgramCpu).
    await measure(result, server, shape, ids, { databaseServer: localDatabaseServer(env), storeWrites: storeWriteSource(store, [server.pid], database.env.DATABASE_URL) });
    result.peakRssMb = server.peakRssMb();
    const ended = server.endedEarly();
    if (ended) throw new Error(`the gateway ${ended}, during the run:\n${lastLines(server.output())}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The server's output can be long: its last lines say why.
    result.problems.push(`did not complete: ${message.split('\n').slice(0, 16).join('\n')}`);
  } finally {
    const code = await server?.stop();
    if (code !== undefined && code !== 0) result.problems.push(`gateway exited with ${code}`);
  }
  try {
    if (result.requests > 0) {
      const check: StoreCheck =
        store === 'sqlite' ? checkSqlite(database.env.TMS_DATA_DIR!, ids) : await checkPostgres(database.env.DATABASE_URL!, POSTGRES_URL, ids);
      result.storeCheck = check;
      if (check.missing > 0) result.problems.push(`LOST MESSAGES: ${check.missing} msg_ids answered with 202 are not in the database`);
      // Requests in flight when a load run stopped (warm-up and measured run) may be committed
      // without their answer being read: at most one per connection per run.
      const inFlightLimit = 2 * connections * (kind === 'batch' ? BATCH_SIZE : 1);
      if (check.unanswered < 0 || check.unanswered > inFlightLimit) {
        result.problems.push(`database holds ${check.stored} messages for ${check.answered} answered (more than ${inFlightLimit} in flight can explain)`);
      }
    }
  } finally {
    await database.drop();
  }
  return result;
}

function gitCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'packages'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${commit}+changes` : commit;
  } catch {
    return 'unknown';
  }
}

/**
 * Production runs the compiled build (`npm run build`), so the benchmark measures it too: the tsx
 * loader that runs the sources costs start-up time and about 45 MB of RSS per process.
 * TMS_BENCH_FROM_SOURCES=1 measures the sources instead.
 */
function buildGateway(): string {
  if (process.env.TMS_BENCH_FROM_SOURCES === '1') return 'the TypeScript sources (TMS_BENCH_FROM_SOURCES=1)';
  try {
    execFileSync('npm', ['run', 'build', '-w', '@tms/gateway'], { cwd: ROOT, stdio: 'ignore' });
    return 'the compiled build (packages/gateway/dist, built now)';
  } catch {
    return 'the TypeScript sources (the build failed: run `npm run build -w @tms/gateway` to see why)';
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;
  const load = loadavg().map((value) => value.toFixed(2)).join(' ');
  say(`TMS benchmark: ${machine}; load average before: ${load}`);
  say(`gateway runs from: ${buildGateway()}`);
  const wanted = (id: string) => ONLY.size === 0 || ONLY.has(id);

  const postgresProblem = await postgresReachable();
  const stores: ('sqlite' | 'postgres')[] = ['sqlite'];
  const notes: string[] = [];
  if (postgresProblem === null) stores.push('postgres');
  else notes.push(`PostgreSQL skipped: ${POSTGRES_URL} is not reachable (${postgresProblem}); set TMS_BENCH_DATABASE_URL`);
  for (const note of notes) say(`NOTE: ${note}`);

  const results: ScenarioResult[] = [];
  for (const store of stores) {
    let ceiling: ScenarioResult | null = null;
    if (wanted(`ceiling-${store}`) || wanted(`single-${store}`)) {
      ceiling = await runCeiling(store).catch((error: unknown) => {
        const failed = emptyResult(`ceiling-${store}`, 'ceiling', store, CONNECTIONS);
        failed.problems.push(`did not run: ${error instanceof Error ? error.message : String(error)}`);
        return failed;
      });
      results.push(ceiling);
    }
    for (const kind of ['single', 'batch'] as const) {
      const id = `${kind}-${store}`;
      if (!wanted(id)) continue;
      const result = await runGateway(id, kind, store).catch((error: unknown) => {
        const failed = emptyResult(id, kind, store, kind === 'single' ? CONNECTIONS : BATCH_CONNECTIONS);
        failed.problems.push(`did not run: ${error instanceof Error ? error.message : String(error)}`);
        return failed;
      });
      if (kind === 'single' && ceiling && ceiling.requestsPerSecond > 0 && result.requests > 0) result.percentOfCeiling = (100 * result.requestsPerSecond) / ceiling.requestsPerSecond;
      if (kind === 'single' && ceiling?.serverCpuUsPerRequest && result.serverCpuUsPerRequest !== null) result.cpuRatioToCeiling = result.serverCpuUsPerRequest / ceiling.serverCpuUsPerRequest;
      results.push(result);
    }
  }

  const dispatchResults: DispatchResult[] = [];
  for (const scenario of DISPATCH_SCENARIOS) {
    if (!wanted(scenario.id) || !stores.includes(scenario.store)) continue;
    dispatchResults.push(
      await runDispatch(scenario, {
        root: ROOT,
        harness,
        messages: DISPATCH_MESSAGES,
        timeoutSeconds: DISPATCH_TIMEOUT_SECONDS,
        extraEnv: EXTRA_GATEWAY_ENV,
        nodeArgs: EXTRA_NODE_ARGS,
        profileDir: CPU_PROFILE ? join(RESULTS_DIR, 'profiles') : null,
        say,
      }),
    );
  }
  const dispatchGoals = dispatchTargets(dispatchResults);

  const webhookResults: WebhookResult[] = [];
  for (const scenario of WEBHOOK_SCENARIOS) {
    if (!wanted(scenario.id) || !stores.includes(scenario.store)) continue;
    webhookResults.push(
      await runWebhookScenario(scenario, {
        root: ROOT,
        harness,
        deliveries: WEBHOOK_DELIVERIES,
        loopMessages: LOOP_MESSAGES,
        loopBatch: LOOP_BATCH,
        loopConnections: LOOP_CONNECTIONS,
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS,
        extraEnv: EXTRA_GATEWAY_ENV,
        nodeArgs: EXTRA_NODE_ARGS,
        profileDir: CPU_PROFILE ? join(RESULTS_DIR, 'profiles') : null,
        say,
      }),
    );
  }
  const webhookGoals = webhookTargets(webhookResults);

  // TMS's SQLite loop and Kannel's, interleaved (loop-vs-kannel.ts). Single sends, as Kannel's sendsms
  // takes one message per request; skipped with a note, not failed, when Kannel is not installed.
  const kannelComparison: LoopVsKannelResult | null = wanted(LOOP_VS_KANNEL_ID)
    ? await runLoopVsKannel({
        root: ROOT,
        harness,
        deliveries: WEBHOOK_DELIVERIES,
        loopMessages: LOOP_MESSAGES,
        loopBatch: 1,
        loopConnections: LOOP_CONNECTIONS,
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS,
        extraEnv: EXTRA_GATEWAY_ENV,
        nodeArgs: EXTRA_NODE_ARGS,
        profileDir: CPU_PROFILE ? join(RESULTS_DIR, 'profiles', LOOP_VS_KANNEL_ID) : null,
        say,
        pairs: integerSetting('TMS_BENCH_LOOP_PAIRS', 3),
        kannelConnections: integerSetting('TMS_BENCH_KANNEL_CONNECTIONS', 50),
        kannelImmediateReply: process.env.TMS_BENCH_KANNEL_IMMEDIATE_REPLY === '1',
      })
    : null;
  const kannelGoals = kannelComparison ? loopVsKannelTargets(kannelComparison) : [];

  const consoleResults: ConsoleReadsResult[] = [];
  for (const scenario of CONSOLE_READ_SCENARIOS) {
    if (!wanted(scenario.id) || !stores.includes(scenario.store)) continue;
    consoleResults.push(
      await runConsoleReads(scenario, { root: ROOT, harness, messages: CONSOLE_MESSAGES, requests: CONSOLE_REQUESTS, keepDatabase: process.env.TMS_BENCH_CONSOLE_KEEP_DATABASE === '1', extraEnv: EXTRA_GATEWAY_ENV, nodeArgs: EXTRA_NODE_ARGS, say }),
    );
  }
  const consoleGoals = consoleReadsTargets(consoleResults);

  // Several API processes on one PostgreSQL database, ten busy workspaces (scaling.ts, docs/scaling.md).
  const scalingResults: ScalingResult[] = [];
  for (const scenario of SCALING_SCENARIOS) {
    if (!wanted(scenario.id) || !stores.includes(scenario.store)) continue;
    scalingResults.push(
      await runScaling(scenario, { root: ROOT, harness, processes: integerSetting('TMS_BENCH_SCALING_PROCESSES', 3), connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, adminUrl: POSTGRES_URL, extraEnv: EXTRA_GATEWAY_ENV, nodeArgs: EXTRA_NODE_ARGS, say }),
    );
  }
  const scalingGoals = scalingTargets(scalingResults);

  // Cost as the store grows (grown-store.ts): reads on a grown store; acceptance and dispatch on it against an empty one.
  const grownResults: GrownStoreResult[] = [];
  for (const scenario of GROWN_STORE_SCENARIOS) {
    if (!wanted(scenario.id) || !stores.includes(scenario.store)) continue;
    grownResults.push(
      await runGrownStore(scenario, {
        root: ROOT,
        harness,
        messages: integerSetting('TMS_BENCH_GROWN_MESSAGES', 5_000_000),
        busiest: integerSetting('TMS_BENCH_GROWN_BUSIEST', 1_000_000),
        otherWorkspaces: integerSetting('TMS_BENCH_GROWN_WORKSPACES', 19),
        requests: integerSetting('TMS_BENCH_GROWN_REQUESTS', 200),
        rounds: integerSetting('TMS_BENCH_GROWN_ROUNDS', 4),
        parts: new Set(GROWN_PARTS.filter((part) => (process.env.TMS_BENCH_GROWN_PARTS ?? GROWN_PARTS.join(',')).split(',').includes(part))),
        dispatchMessages: integerSetting('TMS_BENCH_GROWN_DISPATCH_MESSAGES', 20_000),
        dispatchTimeoutSeconds: DISPATCH_TIMEOUT_SECONDS,
        acceptSeconds: SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        connections: CONNECTIONS,
        keepDatabase: process.env.TMS_BENCH_GROWN_KEEP_DATABASE === '1',
        extraEnv: EXTRA_GATEWAY_ENV,
        nodeArgs: EXTRA_NODE_ARGS,
        say,
      }),
    );
  }
  const grownGoals = grownStoreTargets(grownResults);

  const targets = evaluateTargets(results);
  const date = new Date().toISOString().slice(0, 10);
  const settings = `${SECONDS} s per scenario after ${WARMUP_SECONDS} s warm-up, single sends at ${CONNECTIONS} connections, batches at ${BATCH_CONNECTIONS}; the ceiling measured right before each store's single sends; load generator (autocannon) and PostgreSQL on the same machine`;
  const commit = gitCommit();

  console.log('');
  console.log(`TMS benchmark, ${new Date().toISOString()}, commit ${commit}`);
  const loadAfter = loadavg().map((value) => value.toFixed(2)).join(' ');
  console.log(`${machine}; load average before: ${load}, after: ${loadAfter}`);
  // The benchmark itself keeps the load average near 2 (load generator, server, PostgreSQL), so
  // only the load before it says whether other work shared the machine.
  if (Number(load.split(' ')[0]) > cpus().length / 2) {
    console.log(`WARNING: other work was running on this machine (load average ${load.split(' ')[0]} before the benchmark): the numbers below are noisy`);
  }
  console.log(settings);
  console.log('peak RSS: VmHWM of the server process, restarted per scenario (start-up, seeding, warm-up and run);');
  console.log('server CPU: user + system time of the server process during the measured run, per second and per good answer');
  console.log('PostgreSQL CPU: the backends and background processes of a local PostgreSQL server during the measured run, per good answer, not counted in the server CPU (a lower bound: a process that ends between two samples loses its last moments)');
  console.log('');
  if (results.length > 0) {
    console.log(textTable(results));
    console.log('');
  }
  if (dispatchResults.length > 0) {
    console.log(`Dispatch, queued → sent through the ZNS simulator (${DISPATCH_MESSAGES.toLocaleString('en-US')} messages accepted first; timed from worker start; events off):`);
    console.log(dispatchTable(dispatchResults));
    console.log('');
  }
  if (webhookResults.length > 0) {
    console.log(`Delivery-report webhooks (every report's signature verified by the receiver; loop: ${LOOP_BATCH === 1 ? 'single sends' : `batches of ${LOOP_BATCH}`} at ${LOOP_CONNECTIONS} connections):`);
    console.log(webhookTable(webhookResults));
    console.log('');
  }
  if (kannelComparison) {
    console.log(loopVsKannelText(kannelComparison));
    console.log('');
  }
  if (consoleResults.length > 0) {
    console.log(`Console reads on a workspace of ${CONSOLE_MESSAGES.toLocaleString('en-US')} messages (${CONSOLE_REQUESTS} sequential requests per read after 20 warm-up, one connection; client latency on loopback, an upper bound of server time):`);
    console.log(consoleReadsTable(consoleResults));
    console.log('');
  }
  if (grownResults.length > 0) {
    console.log('Cost as the store grows (grown-store.ts; reads: sequential requests on one connection, client latency on loopback; single sends and dispatch: medians of the runs, empty and grown store in turn):');
    console.log(grownStoreTable(grownResults));
    console.log('');
  }
  if (scalingResults.length > 0) {
    console.log(`Several API processes on one PostgreSQL database (single sends at ${CONNECTIONS} connections dealt over the processes; locks sampled from pg_stat_activity and pg_locks during each run):`);
    console.log(scalingTable(scalingResults));
    console.log('');
  }
  for (const result of results) {
    if (result.storeCheck) {
      const check = result.storeCheck;
      const transactions = check.transactions === null ? '' : `; ${check.transactions.toLocaleString('en-US')} PostgreSQL commits in the gateway's database`;
      console.log(
        `${result.id}: ${check.answered.toLocaleString('en-US')} msg_ids answered 202, all in the database: ${check.missing === 0 ? 'yes' : `NO, ${check.missing} missing`}` +
          ` (${check.stored.toLocaleString('en-US')} stored, ${check.unanswered} committed but cut off when a load run stopped)${transactions}`,
      );
    }
  }
  const troubled: { id: string; problems: string[]; errorDetail?: { samples: string[] } }[] = [...results, ...dispatchResults, ...webhookResults, ...consoleResults, ...scalingResults, ...grownResults, ...(kannelComparison ? [kannelComparison] : [])].filter((result) => result.problems.length > 0);
  if (troubled.length > 0) {
    console.log('');
    console.log('!!!!!!!! THIS RUN HAS ERRORS: the numbers of these scenarios are not valid !!!!!!!!');
    for (const result of troubled) {
      console.log(`  ${result.id}: ${result.problems.join('; ')}`);
      for (const sample of result.errorDetail?.samples ?? []) console.log(`    e.g. ${sample}`);
    }
  }
  for (const note of notes) console.log(`NOTE: ${note}`);
  console.log('');
  console.log('Targets:');
  console.log(targetLines(targets));
  for (const goal of dispatchGoals) console.log(`  ${goal.met === null ? 'n/a ' : goal.met ? 'PASS' : 'FAIL'}  ${goal.text}`);
  for (const goal of webhookGoals) console.log(`  ${goal.met === null ? 'n/a ' : goal.met ? 'PASS' : 'FAIL'}  ${goal.text}`);
  for (const goal of kannelGoals) console.log(`  ${goal.met === null ? 'n/a ' : goal.met ? 'PASS' : 'FAIL'}  ${goal.text}`);
  for (const goal of consoleGoals) console.log(`  ${goal.met === null ? 'n/a ' : goal.met ? 'PASS' : 'FAIL'}  ${goal.text}`);
  for (const goal of scalingGoals) console.log(`  ${goal.met === null ? 'n/a ' : goal.met ? 'PASS' : 'FAIL'}  ${goal.text}`);
  for (const goal of grownGoals) console.log(`  ${goal.met === null ? 'n/a ' : goal.met ? 'PASS' : 'FAIL'}  ${goal.text}`);
  const md = markdown({ results, targets, machine, settings, date });
  if (results.length > 0) {
    console.log('');
    console.log('Markdown for the README:');
    console.log('');
    console.log(md);
  }
  if (kannelComparison) console.log(`\nMarkdown for the README (TMS loop vs Kannel):\n\n${loopVsKannelMarkdown(kannelComparison)}`);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, 'latest.json');
  const report = { date: new Date().toISOString(), commit, machine, loadAverageBefore: load, loadAverageAfter: loadAfter, settings: { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS, batchConnections: BATCH_CONNECTIONS, batchSize: BATCH_SIZE }, notes, results, targets, dispatch: { messages: DISPATCH_MESSAGES, results: dispatchResults, targets: dispatchGoals }, webhooks: { deliveries: WEBHOOK_DELIVERIES, loopMessages: LOOP_MESSAGES, loopBatch: LOOP_BATCH, results: webhookResults, targets: webhookGoals }, consoleReads: { messages: CONSOLE_MESSAGES, requestsPerRead: CONSOLE_REQUESTS, results: consoleResults, targets: consoleGoals }, scaling: { results: scalingResults, targets: scalingGoals }, grownStore: { results: grownResults, targets: grownGoals }, loopVsKannel: kannelComparison && { ...kannelComparison, targets: kannelGoals, markdown: loopVsKannelMarkdown(kannelComparison) }, markdown: md };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log('');
  console.log(`Results written to ${file} (${((Date.now() - started) / 1000).toFixed(0)} s in all)`);
  if (troubled.length > 0) process.exitCode = 1;
}

await main();
