/**
 * Delivery-report webhooks, two measurements:
 *
 * 1. webhooks-deliveries-{sqlite,postgres}: webhook deliveries per second from one `tms worker`
 *    process to a local receiver that answers at once. TMS_BENCH_WEBHOOK_DELIVERIES (50,000)
 *    outbox rows are written straight into a fresh database (as delivery events write them); the
 *    clock runs from the worker's start (and, steadier, from its first report) until the receiver
 *    has verified every report.
 * 2. webhooks-loop-{sqlite,postgres}: the full loop on `tms start` (API and workers in one process;
 *    webhooks-loop-postgres-split: `tms api` and `tms worker`, two processes):
 *    TMS_BENCH_LOOP_MESSAGES (20,000) messages sent through the API (TMS_BENCH_LOOP_BATCH recipients
 *    per request, 1 = single sends, at TMS_BENCH_LOOP_CONNECTIONS connections), dispatched to the ZNS
 *    simulator (its own process, answering at once, its delivery events posted back at once),
 *    delivered, and their reports received and verified. Messages/s from the first request to the
 *    last report, and CPU per message of the system under test (the gateway process(es) and the
 *    simulator; the load generator and the receiver, both in this process, are left out, as on
 *    Kannel's side in kannel.ts). Two runs on the same processes: cold, on the fresh gateway, then
 *    warm, another TMS_BENCH_LOOP_MESSAGES on the still-running one.
 *
 * The receiver runs in the benchmark process: it checks every signature (HMAC-SHA256 of the raw
 * bytes, timing-safe) and counts each message_id once. A bad signature, a missing report or a
 * delivery not recorded `delivered` invalidates the scenario.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteDatabase } from '../src/store/sqlite-driver.ts';
import pg from 'pg';
import pino from 'pino';
import { Pool } from 'undici';
import { parseConfig } from '../src/config/config.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { createApiKey } from '../src/services/admin/api-keys.ts';
import { createWorkspace } from '../src/services/admin/workspaces.ts';
import { insertRows } from '../src/store/bulk-insert.ts';
import { runInTransaction } from '../src/store/database.ts';
import type { WebhookDeliveryRow } from '../src/store/schema.ts';
import { benchGatewayEnvironment, freePort, lastLines, localDatabaseServer, neutralEnvironment, readCpuSeconds, readPeakRssMb, spawnChild, startServer, type Child, type ServerProcess } from './processes.ts';
import { describeCpuByProcess, describeGatewayToSimulatorCpu, measureLoopPhase, type LoopPhase } from './loop-phase.ts';
import { describeStoreWrites, kilobytesPer, storeWriteSource } from './store-writes.ts';
import { phoneOf } from './phones.ts';
import { fmt } from './report.ts';
import { startBenchReceiver, type BenchReceiver } from './webhook-receiver.ts';
import type * as Harness from '../test/harness.ts';

export const WEBHOOK_SCENARIOS = [
  { id: 'webhooks-deliveries-sqlite', kind: 'deliveries', store: 'sqlite' },
  { id: 'webhooks-deliveries-postgres', kind: 'deliveries', store: 'postgres' },
  { id: 'webhooks-loop-sqlite', kind: 'loop', store: 'sqlite' },
  { id: 'webhooks-loop-postgres', kind: 'loop', store: 'postgres' },
  { id: 'webhooks-loop-postgres-split', kind: 'loop', store: 'postgres', split: true },
] as const;

export type WebhookScenario = (typeof WEBHOOK_SCENARIOS)[number];

/** The loop on `tms api` + `tms worker` (two processes) rather than one `tms start`. */
const isSplit = (scenario: WebhookScenario): boolean => 'split' in scenario && scenario.split;

export interface WebhookContext {
  root: string;
  harness: typeof Harness;
  deliveries: number;
  loopMessages: number;
  loopBatch: number;
  loopConnections: number;
  timeoutSeconds: number;
  extraEnv: Record<string, string>;
  nodeArgs: string[];
  /** Where gateway children write .cpuprofile files, or null. */
  profileDir: string | null;
  say(text: string): void;
}

export interface WebhookResult {
  id: string;
  kind: 'deliveries' | 'loop';
  store: 'sqlite' | 'postgres';
  items: number;
  /** deliveries: worker start → last report; loop: first API request → last report. */
  seconds: number;
  perSecond: number;
  /** deliveries: first report → last report (without the worker's start-up). */
  steadyPerSecond: number | null;
  /** loop: how long the API took to accept everything. */
  acceptSeconds: number | null;
  requests: number;
  duplicates: number;
  badSignatures: number;
  /** Outbox rows per status at the end. */
  outbox: Record<string, number>;
  peakRssMb: number | null;
  /** deliveries: the worker, start-up included; loop: the system under test (gateway processes and simulator) in the cold run. */
  cpuSeconds: number | null;
  /** cpuSeconds per delivery or message, in µs. */
  cpuMicrosecondsPerItem: number | null;
  /** loop: the cold run (its figures are also the ones above) and the warm run on the same processes. */
  phases: LoopPhase[];
  problems: string[];
}


const DEMO_OA = '4318269720189301001';
const OTP_TEMPLATE = '250002';

async function call(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Outbox rows per status, read straight from the database. */
async function outboxStatuses(database: Harness.TestDatabase): Promise<Record<string, number>> {
  if (database.kind === 'sqlite') {
    const db = openSqliteDatabase(join(database.env.TMS_DATA_DIR!, 'tms.sqlite'), { readonly: true });
    try {
      return Object.fromEntries((db.prepare('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status').all() as { status: string; n: number }[]).map((r) => [r.status, r.n]));
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  try {
    return Object.fromEntries((await client.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status')).rows.map((r) => [r.status, Number(r.n)]));
  } finally {
    await client.end();
  }
}

function emptyResult(scenario: WebhookScenario, items: number): WebhookResult {
  return {
    id: scenario.id,
    kind: scenario.kind,
    store: scenario.store,
    items,
    seconds: 0,
    perSecond: 0,
    steadyPerSecond: null,
    acceptSeconds: null,
    requests: 0,
    duplicates: 0,
    badSignatures: 0,
    outbox: {},
    peakRssMb: null,
    cpuSeconds: null,
    cpuMicrosecondsPerItem: null,
    phases: [],
    problems: [],
  };
}

function profileArgs(context: WebhookContext, id: string): string[] {
  if (!context.profileDir) return [];
  mkdirSync(join(context.profileDir, id), { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${join(context.profileDir, id)}`];
}

/** A report body as a delivery event writes it, of the usual size. */
function reportBody(index: number, now: number): string {
  const id = `msg_BENCH${String(index).padStart(21, '0')}`;
  return JSON.stringify({
    message_id: id,
    client_req_id: `order-${index}`,
    from: DEMO_OA,
    to: `8491${String(1_000_000 + index).slice(-7)}`,
    status: 'SUCCESS',
    delivered_at: new Date(now).toISOString(),
    tracking_id: (index * 2_654_435_761).toString(16).padStart(20, '0').slice(-20),
  });
}

/** Scenario 1: the workspace, its key and the outbox rows straight into the store, then one `tms worker`. */
async function runDeliveries(scenario: WebhookScenario, context: WebhookContext, receiver: BenchReceiver, result: WebhookResult): Promise<void> {
  const { harness, say } = context;
  const database = await harness.createTestDatabase(scenario.store);
  let worker: Child | null = null;
  try {
    const env = benchGatewayEnvironment(harness, database, { TMS_TEMPLATE_SYNC_MS: '0', ...context.extraEnv });
    const runtime = await createRuntime(parseConfig(env), { log: pino({ level: 'silent' }) });
    try {
      const ctx = runtime.contextFor({ kind: 'operator' });
      const workspace = await createWorkspace({ ctx, input: { name: 'bench webhooks' } });
      const key = await createApiKey({ ctx, input: { workspaceId: workspace.id, scopes: ['messages:send'], webhook_url: receiver.url } });
      receiver.apiKey = key.secret;
      const now = Date.now();
      const rows: WebhookDeliveryRow[] = Array.from({ length: context.deliveries }, (_, index) => ({
        id: `dlv_BENCH${String(index).padStart(21, '0')}`,
        message_id: `msg_BENCH${String(index).padStart(21, '0')}`,
        workspace_id: workspace.id,
        api_key_id: key.row.id,
        url: receiver.url,
        body: reportBody(index, now),
        status: 'pending',
        attempts: 0,
        attempts_at_redelivery: 0,
        next_attempt_at: now,
        lease_expires_at: null,
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        failed_at: null,
        created_at: now,
        updated_at: now,
      }));
      for (let start = 0; start < rows.length; start += 5000) {
        await runInTransaction(runtime.store, (trx) => insertRows(trx, runtime.store.dialect, 'webhook_deliveries', rows.slice(start, start + 5000)));
      }
    } finally {
      await runtime.close();
    }
    say(`  ${context.deliveries.toLocaleString('en-US')} reports in the outbox; starting one tms worker`);
    const started = performance.now();
    worker = spawnChild(context.root, [...profileArgs(context, scenario.id), ...context.nodeArgs, join(context.root, 'packages/gateway/bin/tms.js'), 'worker'], { ...env, PORT: '0' });
    const exited = () => worker!.child.exitCode !== null || worker!.child.signalCode !== null;
    await Promise.race([
      receiver.waitForUnique(context.deliveries, context.timeoutSeconds * 1000, (unique) => say(`  ${((performance.now() - started) / 1000).toFixed(0)} s: ${unique.toLocaleString('en-US')} reports`)),
      (async () => {
        while (!exited()) await new Promise((resolve) => setTimeout(resolve, 200));
        if (receiver.stats.unique < context.deliveries) throw new Error(`the worker exited early:\n${lastLines(worker!.output())}`);
      })(),
    ]);
    const ended = receiver.stats.lastNewAt ?? performance.now();
    result.seconds = (ended - started) / 1000;
    result.perSecond = context.deliveries / result.seconds;
    if (receiver.stats.firstAt !== null && ended > receiver.stats.firstAt) result.steadyPerSecond = (context.deliveries - 1) / ((ended - receiver.stats.firstAt) / 1000);
    result.peakRssMb = readPeakRssMb(worker.child.pid!);
    result.cpuSeconds = readCpuSeconds(worker.child.pid!);
    result.cpuMicrosecondsPerItem = result.cpuSeconds === null ? null : (result.cpuSeconds * 1e6) / context.deliveries;
    // Outcomes are recorded a moment after the answers: let the worker finish and stop cleanly.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const code = await worker.stop();
    worker = null;
    if (code !== 0) result.problems.push(`worker exited with ${code}`);
    result.outbox = await outboxStatuses(database);
    if ((result.outbox.delivered ?? 0) !== context.deliveries) result.problems.push(`outbox: ${JSON.stringify(result.outbox)} (want ${context.deliveries} delivered)`);
  } finally {
    if (worker) await worker.stop();
    await database.drop();
  }
}

async function startSimulatorProcess(context: WebhookContext, nodeArgs: string[] = []): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = spawnChild(context.root, [...nodeArgs, join(context.root, 'packages/zns-sim/bin/tms-zns-sim.js'), '--port', String(port)], neutralEnvironment());
  const deadline = Date.now() + 30_000;
  while (!child.output().includes('listening on')) {
    if (child.child.exitCode !== null) throw new Error(`simulator exited: ${child.output()}`);
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`simulator not ready: ${child.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = `http://127.0.0.1:${port}`;
  await call(`${url}/_control/oas/${DEMO_OA}/quota`, 'PUT', { daily_quota: 10_000_000 });
  await call(`${url}/_control/recipient-rules`, 'PUT', []);
  return { url, child };
}

/** Sends `count` messages through the public API, to phone numbers from the `firstIndex`th on; returns their msg_ids. */
async function acceptThroughApi(url: string, apiKey: string, count: number, batch: number, connections: number, firstIndex: number): Promise<string[]> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const ids: string[] = [];
  const requests = Math.ceil(count / batch);
  let next = 0;
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const one = async () => {
    while (next < requests) {
      const index = next++;
      const size = Math.min(batch, count - index * batch);
      const first = firstIndex + index * batch;
      const body =
        batch === 1
          ? { template_id: OTP_TEMPLATE, phone: phoneOf(first), template_data: { otp: String(100_000 + (first % 900_000)) } }
          : { template_id: OTP_TEMPLATE, recipients: Array.from({ length: size }, (_, r) => ({ phone: phoneOf(first + r), template_data: { otp: String(100_000 + ((first + r) % 900_000)) } })) };
      const path = batch === 1 ? '/api/v1/messages/send' : '/api/v1/messages/batch';
      const response = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(body) });
      const answer = (await response.body.json()) as { msg_id?: string; accepted?: number; results?: { msg_id?: string }[] };
      if (response.statusCode !== 202) throw new Error(`${path}: ${response.statusCode} ${JSON.stringify(answer).slice(0, 300)}`);
      if (batch === 1) ids.push(answer.msg_id!);
      else {
        if (answer.accepted !== size) throw new Error(`batch accepted ${answer.accepted} of ${size}`);
        for (const item of answer.results ?? []) ids.push(item.msg_id!);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, one));
  } finally {
    await pool.close();
  }
  return ids;
}

/**
 * Scenario 2: `tms start` (or `tms api` + `tms worker`) with the simulator and the receiver, timed
 * from the first request to the last report, twice on the same processes: `cold` right after the
 * gateway started (its JIT cold, its caches empty), then `warm`, another run of the same size.
 */
async function runLoop(scenario: WebhookScenario, context: WebhookContext, receiver: BenchReceiver, result: WebhookResult): Promise<void> {
  const { harness, say } = context;
  const sim = await startSimulatorProcess(context, profileArgs(context, `${scenario.id}-simulator`));
  const database = await harness.createTestDatabase(scenario.store);
  let gateway: ServerProcess | null = null;
  let worker: Child | null = null;
  try {
    const env = benchGatewayEnvironment(harness, database, { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, TMS_TEMPLATE_SYNC_MS: '0', ...context.extraEnv });
    gateway = await startServer({
      cwd: context.root,
      script: join(context.root, 'packages/gateway/bin/tms.js'),
      args: [isSplit(scenario) ? 'api' : 'start'],
      nodeArgs: [...profileArgs(context, scenario.id), ...context.nodeArgs],
      env,
      port: await freePort(),
    });
    if (isSplit(scenario)) {
      worker = spawnChild(context.root, [...profileArgs(context, scenario.id), ...context.nodeArgs, join(context.root, 'packages/gateway/bin/tms.js'), 'worker'], { ...env, PORT: '0' });
    }
    await call(`${sim.url}/_control/events`, 'PUT', { url: `${gateway.url}/platform/zns/events`, delay_ms: 0, max_in_flight: 256, timeout_ms: 10_000 });
    const admin = (method: string, path: string, body?: unknown) => call(`${gateway!.url}/admin/v1${path}`, method, body, { authorization: `Bearer ${env.TMS_ADMIN_TOKEN}` });
    const workspace = await admin('POST', '/workspaces', { name: 'bench loop' });
    await admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 1_000_000_000_000 });
    const { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } = await import('../src/services/demo.ts');
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    await admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, { ...account, daily_quota: 1_000_000_000 });
    const { template_id: templateId, ...template } = DEMO_TEMPLATES.find((t) => t.template_id === OTP_TEMPLATE)!;
    await admin('PUT', `/workspaces/${workspace.id}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId });
    const key = await admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'], webhook_url: receiver.url });
    receiver.apiKey = key.key;

    // The system under test: the gateway process(es) and the simulator standing in for the platform.
    // The load generator and the receiver (this process) are not part of it.
    const running = gateway;
    const systemProcesses: Record<string, number> = worker
      ? { api: running.pid, worker: worker.child.pid!, simulator: sim.child.child.pid! }
      : { gateway: running.pid, simulator: sim.child.child.pid! };
    const ids: string[] = [];
    for (const label of ['cold', 'warm'] as const) {
      say(`  ${label}: sending ${context.loopMessages.toLocaleString('en-US')} messages (${context.loopBatch === 1 ? 'single sends' : `batches of ${context.loopBatch}`}, ${context.loopConnections} connections)`);
      const phase = await measureLoopPhase({
        label,
        messages: context.loopMessages,
        processes: systemProcesses,
        databaseServer: localDatabaseServer(database.env),
        storeWrites: storeWriteSource(scenario.store, worker ? [running.pid, worker.child.pid!] : [running.pid], database.env.DATABASE_URL),
        receiver,
        timeoutSeconds: context.timeoutSeconds,
        callbackName: 'reports',
        send: async () => {
          ids.push(...(await acceptThroughApi(running.url, key.key, context.loopMessages, context.loopBatch, context.loopConnections, ids.length)));
        },
        say,
      });
      result.phases.push(phase);
      say(`  ${label}: ${phase.perSecond.toFixed(0)} msg/s (${phase.seconds.toFixed(2)} s, accepted in ${phase.acceptSeconds.toFixed(2)} s), ${fmt(phase.cpuMicrosecondsPerMessage)} µs CPU/msg (${describeCpuByProcess(phase)}${describeGatewayToSimulatorCpu(phase)})${databaseCpuNote(phase)}; ${describeStoreWrites(phase.storeWrites, phase.messages, 'msg')}`);
    }
    const cold = result.phases[0]!;
    result.seconds = cold.seconds;
    result.perSecond = cold.perSecond;
    result.acceptSeconds = cold.acceptSeconds;
    result.cpuSeconds = cold.cpuSeconds;
    result.cpuMicrosecondsPerItem = cold.cpuMicrosecondsPerMessage;
    result.peakRssMb = Math.max(running.peakRssMb() ?? 0, worker ? (readPeakRssMb(worker.child.pid!) ?? 0) : 0) || null;
    const missing = ids.filter((id) => !receiver.seen.has(id));
    if (missing.length > 0) result.problems.push(`${missing.length} accepted messages without a report (e.g. ${missing[0]})`);
    const workerCode = await worker?.stop();
    worker = null;
    if (workerCode !== undefined && workerCode !== 0) result.problems.push(`worker exited with ${workerCode}`);
    const code = await running.stop();
    gateway = null;
    if (code !== 0) result.problems.push(`gateway exited with ${code}`);
    result.outbox = await outboxStatuses(database);
    if ((result.outbox.delivered ?? 0) !== ids.length) result.problems.push(`outbox: ${JSON.stringify(result.outbox)} (want ${ids.length} delivered)`);
  } catch (error) {
    // A reset connection says little; the gateway's own last words say why it ended.
    const ended = gateway?.endedEarly();
    if (ended) throw new Error(`${error instanceof Error ? error.message : String(error)}; the gateway ${ended}:\n${lastLines(gateway!.output())}`);
    throw error;
  } finally {
    if (worker) await worker.stop();
    if (gateway) await gateway.stop();
    await sim.child.stop();
    await database.drop();
  }
}

export async function runWebhookScenario(scenario: WebhookScenario, context: WebhookContext): Promise<WebhookResult> {
  const items = scenario.kind === 'deliveries' ? context.deliveries : context.loopMessages;
  const result = emptyResult(scenario, items);
  context.say(
    scenario.kind === 'deliveries'
      ? `${scenario.id}: ${items.toLocaleString('en-US')} webhook deliveries from one tms worker on ${scenario.store}`
      : `${scenario.id}: full loop of ${items.toLocaleString('en-US')} messages on ${isSplit(scenario) ? 'tms api + tms worker' : 'tms start'} (${scenario.store}), API → simulator → delivered → verified report`,
  );
  const receiver = await startBenchReceiver();
  try {
    if (scenario.kind === 'deliveries') await runDeliveries(scenario, context, receiver, result);
    else await runLoop(scenario, context, receiver, result);
    context.say(`  done in ${result.seconds.toFixed(2)} s: ${result.perSecond.toFixed(0)}/s${result.steadyPerSecond ? ` (${result.steadyPerSecond.toFixed(0)}/s from the first report)` : ''}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    result.problems.push(`did not complete: ${message.split('\n').slice(0, 20).join('\n')}`);
  } finally {
    result.requests = receiver.stats.requests;
    result.duplicates = receiver.stats.duplicates;
    result.badSignatures = receiver.stats.rejected;
    if (receiver.stats.rejected > 0) result.problems.push(`${receiver.stats.rejected} reports with a bad signature`);
    await receiver.close();
  }
  return result;
}

export function webhookTable(results: WebhookResult[]): string {
  const header = ['scenario', 'store', 'items', 'seconds', 'per second', 'per second after 1st report', 'accept s', 'requests', 'duplicates', 'bad signatures', 'peak RSS MB', 'CPU s', 'CPU µs/item', 'warm per second', 'warm CPU µs/msg', 'PostgreSQL server CPU µs/msg', 'store writes KB/msg'];
  const rows = results.map((r) => {
    const warm = r.phases.find((phase) => phase.label === 'warm');
    const database = r.phases.map((phase) => phase.databaseCpuMicrosecondsPerMessage);
    return [
      r.id,
      r.store,
      fmt(r.items),
      fmt(r.seconds, 2),
      fmt(r.perSecond),
      fmt(r.steadyPerSecond),
      fmt(r.acceptSeconds, 2),
      fmt(r.requests),
      fmt(r.duplicates),
      fmt(r.badSignatures),
      fmt(r.peakRssMb),
      fmt(r.cpuSeconds, 1),
      fmt(r.cpuMicrosecondsPerItem),
      fmt(warm?.perSecond ?? null),
      fmt(warm?.cpuMicrosecondsPerMessage ?? null),
      database.some((microseconds) => microseconds !== null) ? database.map((microseconds) => fmt(microseconds)).join(' / ') : '-',
      storeWritesColumn(r.phases),
    ];
  });
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((cells) => cells[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  const notes = [
    'CPU: deliveries, the one tms worker (start-up included); loop, every process of the system under test (the gateway process(es) and the ZNS simulator), not the load generator or the receiver.',
    'loop: the figures before "warm" are the cold run on a fresh gateway; "warm" is a second run of the same size on the same, still running processes.',
    'store writes (cold / warm): SQLite, the bytes the gateway process(es) made dirty in files (the log, the checkpoints); PostgreSQL, the server\'s write-ahead log, server-wide (store-writes.ts).',
    'PostgreSQL server CPU (cold / warm): its backends and background processes on this machine, sampled every 200 ms, beside the system under test and not in its CPU; a lower bound (a process that ends between two samples loses its last moments).',
  ];
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), ...notes].join('\n');
}

/** "19.3 / 18.9": KB the store wrote per message, cold / warm. */
function storeWritesColumn(phases: readonly LoopPhase[]): string {
  const perMessage = phases.map((phase) => kilobytesPer(phase.storeWrites, phase.messages));
  return perMessage.some((kilobytes) => kilobytes !== null) ? perMessage.map((kilobytes) => fmt(kilobytes, 1)).join(' / ') : '-';
}

/** "; PostgreSQL server beside: 420 µs/msg", when it was measured. */
function databaseCpuNote(phase: LoopPhase): string {
  const microseconds = phase.databaseCpuMicrosecondsPerMessage;
  return microseconds === null ? '' : `; PostgreSQL server beside them: ${microseconds.toFixed(0)} µs/msg`;
}

/** The full loop's messages/s target: SQLite on `tms start`, PostgreSQL on `tms api` + `tms worker`, PostgreSQL on `tms start`. */
export function loopTarget(scenario: { store: 'sqlite' | 'postgres'; split: boolean }): number {
  if (scenario.store === 'sqlite') return 3500;
  return scenario.split ? 2500 : 2000;
}

/** Webhook targets: ≥ 4,000 deliveries/s from one process; the full loop (cold and warm) at its loopTarget. */
/** Peak RSS of any gateway process while it runs the full loop. */
const LOOP_PEAK_RSS_TARGET_MB = 200;

export function webhookTargets(results: WebhookResult[]): { text: string; met: boolean | null }[] {
  return results.flatMap((r) => {
    const valid = r.problems.length === 0;
    if (r.kind === 'deliveries') {
      const rate = r.steadyPerSecond ?? r.perSecond;
      return [{ text: `${r.id}: ≥ 4,000 webhook deliveries/s from one process (measured ${fmt(rate)} after the first report, ${fmt(r.perSecond)} from start)`, met: valid ? rate >= 4000 : null }];
    }
    const scenario = WEBHOOK_SCENARIOS.find((candidate) => candidate.id === r.id);
    const target = loopTarget({ store: r.store, split: scenario !== undefined && isSplit(scenario) });
    const phases = r.phases.length > 0 ? r.phases : [{ label: 'cold', perSecond: r.perSecond, cpuMicrosecondsPerMessage: r.cpuMicrosecondsPerItem }];
    const rates = phases.map((phase) => ({
      text: `${r.id} (${phase.label}): full loop ≥ ${fmt(target)} messages/s, first request to last verified report (measured ${fmt(phase.perSecond)}; ${fmt(phase.cpuMicrosecondsPerMessage)} µs CPU/msg)`,
      met: valid ? phase.perSecond >= target : null,
    }));
    const memory = {
      text: `${r.id}: peak RSS of every gateway process under the loop ≤ ${LOOP_PEAK_RSS_TARGET_MB} MB (measured ${fmt(r.peakRssMb)} MB)`,
      met: valid && r.peakRssMb !== null ? r.peakRssMb <= LOOP_PEAK_RSS_TARGET_MB : null,
    };
    return [...rates, memory];
  });
}
