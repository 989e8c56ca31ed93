/**
 * End-to-end dispatch throughput: messages/s from `queued` to `sent`, through the ZNS simulator.
 *
 * Per scenario: the simulator in its own process (demo seed, quota raised, events off, recipient
 * rules cleared, optional latency), a fresh database, `tms api` to seed the demo OA and template
 * 250002 and accept TMS_BENCH_DISPATCH_MESSAGES (50,000) messages in 500-recipient batches; the API
 * is stopped, then 1 or 2 `tms worker` processes start and the clock runs from their start until
 * no message is `queued` or `sending`. The database is polled read-only. Afterwards the simulator's
 * stats must show every message accepted exactly once (no duplicate tracking_id = our msg_id), and
 * the database must hold as many distinct provider msg_ids as messages.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteDatabase } from '../src/store/sqlite-driver.ts';
import pg from 'pg';
import { benchGatewayEnvironment, freePort, lastLines, neutralEnvironment, readCpuSeconds, readPeakRssMb, spawnChild, startServer, type Child, type ServerProcess } from './processes.ts';
import { phoneOf } from './phones.ts';
import { fmt } from './report.ts';
import type * as Harness from '../test/harness.ts';

export const DISPATCH_SCENARIOS = [
  { id: 'dispatch-sqlite-0ms', store: 'sqlite', workers: 1, latencyMs: 0 },
  { id: 'dispatch-sqlite-50ms', store: 'sqlite', workers: 1, latencyMs: 50 },
  { id: 'dispatch-postgres-1w-0ms', store: 'postgres', workers: 1, latencyMs: 0 },
  { id: 'dispatch-postgres-1w-50ms', store: 'postgres', workers: 1, latencyMs: 50 },
  { id: 'dispatch-postgres-2w-0ms', store: 'postgres', workers: 2, latencyMs: 0 },
  { id: 'dispatch-postgres-2w-50ms', store: 'postgres', workers: 2, latencyMs: 50 },
] as const;

export type DispatchScenario = (typeof DISPATCH_SCENARIOS)[number];

export interface DispatchResult {
  id: string;
  store: 'sqlite' | 'postgres';
  workers: number;
  latencyMs: number;
  messages: number;
  /** Worker start (spawn) until no message is queued or sending. */
  seconds: number;
  messagesPerSecond: number;
  /** First `sent` row seen until done: without the workers' start-up. */
  steadyMessagesPerSecond: number;
  acceptSeconds: number;
  /** Peak RSS of each worker process, MB. */
  workerPeakRssMb: (number | null)[];
  /** CPU seconds (user + system) of each worker process over its life, start-up included. */
  workerCpuSeconds: (number | null)[];
  /** Rows per status at the end. */
  statuses: Record<string, number>;
  distinctProviderIds: number | null;
  sim: { received: number; accepted: number; rejected: number; duplicateTrackingIds: number; duplicateAccepts: number } | null;
  problems: string[];
}

export interface DispatchContext {
  root: string;
  harness: typeof Harness;
  messages: number;
  timeoutSeconds: number;
  extraEnv: Record<string, string>;
  nodeArgs: string[];
  /** Where workers write .cpuprofile files, or null. */
  profileDir: string | null;
  say(text: string): void;
}

const DEMO_OA = '4318269720189301001';
const TEMPLATE_ID = '250002';
const BATCH = 500;
const ACCEPT_CONCURRENCY = 4;

async function json(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; text: string }> {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text };
}

async function expectOk(what: string, call: Promise<{ status: number; body: unknown; text: string }>): Promise<unknown> {
  const answer = await call;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer.body;
}

async function startSimulator(context: DispatchContext): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = spawnChild(context.root, [join(context.root, 'packages/zns-sim/bin/tms-zns-sim.js'), '--port', String(port)], neutralEnvironment());
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!child.output().includes('listening on')) {
    if (child.child.exitCode !== null) throw new Error(`simulator exited: ${child.output()}`);
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`simulator not ready: ${child.output()}`);
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
  await expectOk('sim quota', json(`${url}/_control/oas/${DEMO_OA}/quota`, 'PUT', { daily_quota: 10_000_000 }));
  await expectOk('sim events off', json(`${url}/_control/events`, 'PUT', { url: null }));
  await expectOk('sim recipient rules', json(`${url}/_control/recipient-rules`, 'PUT', []));
  return { url, child };
}

/** A database reader: rows per status, and distinct provider msg_ids among sent rows. */
interface Counter {
  statuses(): Promise<Record<string, number>>;
  distinctProviderIds(): Promise<number>;
  close(): Promise<void>;
}

async function openCounter(database: Harness.TestDatabase): Promise<Counter> {
  if (database.kind === 'sqlite') {
    const db = openSqliteDatabase(join(database.env.TMS_DATA_DIR!, 'tms.sqlite'), { readonly: true });
    const byStatus = db.prepare('SELECT status, count(*) AS n FROM message_states GROUP BY status');
    return {
      statuses: async () => Object.fromEntries((byStatus.all() as { status: string; n: number }[]).map((r) => [r.status, r.n])),
      distinctProviderIds: async () => (db.prepare("SELECT count(DISTINCT provider_msg_id) AS n FROM message_states WHERE status = 'sent'").get() as { n: number }).n,
      close: async () => {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  return {
    statuses: async () => Object.fromEntries((await client.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM message_states GROUP BY status')).rows.map((r) => [r.status, Number(r.n)])),
    distinctProviderIds: async () => Number((await client.query<{ n: string }>("SELECT count(DISTINCT provider_msg_id) AS n FROM message_states WHERE status = 'sent'")).rows[0]!.n),
    close: async () => {
      await client.end();
    },
  };
}

/** Seeds the demo OA and template through the operator API; accepts `count` messages in batches of 500. */
async function seedAndAccept(api: ServerProcess, adminToken: string, count: number): Promise<void> {
  const admin = (method: string, path: string, body?: unknown) => json(`${api.url}/admin/v1${path}`, method, body, { authorization: `Bearer ${adminToken}` });
  const workspace = (await expectOk('create workspace', admin('POST', '/workspaces', { name: 'bench dispatch', message_cap: null }))) as { id: string };
  await expectOk('top up', admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 1_000_000_000_000 }));
  const { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } = await import('../src/services/demo.ts');
  const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
  await expectOk('connect sender account', admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, { ...account, daily_quota: 1_000_000_000 }));
  const template = DEMO_TEMPLATES.find((t) => t.template_id === TEMPLATE_ID)!;
  const { template_id: templateId, ...templateBody } = template;
  await expectOk('register template', admin('PUT', `/workspaces/${workspace.id}/templates/${templateId}?verify=false`, { ...templateBody, oa_id: oaId }));
  const key = (await expectOk('create key', admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'] }))) as { key: string };

  const batches = Math.ceil(count / BATCH);
  let next = 0;
  const one = async () => {
    while (next < batches) {
      const b = next++;
      const size = Math.min(BATCH, count - b * BATCH);
      const recipients = Array.from({ length: size }, (_, r) => {
        const n = b * BATCH + r;
        return { phone: phoneOf(n), template_data: { otp: String(100_000 + (n % 900_000)) } };
      });
      const answer = await json(`${api.url}/api/v1/messages/batch`, 'POST', { template_id: templateId, recipients }, { authorization: `Bearer ${key.key}` });
      const accepted = (answer.body as { accepted?: number } | null)?.accepted;
      if (answer.status !== 202 || accepted !== size) throw new Error(`batch ${b}: ${answer.status} accepted ${String(accepted)} of ${size}: ${answer.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: ACCEPT_CONCURRENCY }, one));
}

export async function runDispatch(scenario: DispatchScenario, context: DispatchContext): Promise<DispatchResult> {
  const { harness, say } = context;
  const result: DispatchResult = {
    id: scenario.id,
    store: scenario.store,
    workers: scenario.workers,
    latencyMs: scenario.latencyMs,
    messages: context.messages,
    seconds: 0,
    messagesPerSecond: 0,
    steadyMessagesPerSecond: 0,
    acceptSeconds: 0,
    workerPeakRssMb: [],
    workerCpuSeconds: [],
    statuses: {},
    distinctProviderIds: null,
    sim: null,
    problems: [],
  };
  say(`${scenario.id}: ${context.messages.toLocaleString('en-US')} messages, ${scenario.workers} worker process(es) on ${scenario.store}, simulator latency ${scenario.latencyMs} ms`);
  const sim = await startSimulator(context);
  const database = await harness.createTestDatabase(scenario.store);
  const workers: Child[] = [];
  let api: ServerProcess | null = null;
  let counter: Counter | null = null;
  try {
    const env = benchGatewayEnvironment(harness, database, { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, ...context.extraEnv });
    const acceptStarted = performance.now();
    api = await startServer({ cwd: context.root, script: join(context.root, 'packages/gateway/bin/tms.js'), args: ['api'], env, port: await freePort() });
    await seedAndAccept(api, env.TMS_ADMIN_TOKEN!, context.messages);
    const apiCode = await api.stop();
    api = null;
    if (apiCode !== 0) result.problems.push(`api exited with ${apiCode}`);
    result.acceptSeconds = (performance.now() - acceptStarted) / 1000;
    say(`  accepted in ${result.acceptSeconds.toFixed(1)} s (API start, seeding, batches, stop)`);
    if (scenario.latencyMs > 0) await expectOk('sim latency', json(`${sim.url}/_control/faults`, 'PUT', { latency_ms: scenario.latencyMs }));

    counter = await openCounter(database);
    const before = await counter.statuses();
    if ((before.queued ?? 0) !== context.messages) throw new Error(`expected ${context.messages} queued before the workers start, found ${JSON.stringify(before)}`);

    const profileArgs = context.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(context.profileDir, scenario.id)}`] : [];
    if (context.profileDir) mkdirSync(join(context.profileDir, scenario.id), { recursive: true });
    const started = performance.now();
    for (let w = 0; w < scenario.workers; w += 1) {
      workers.push(spawnChild(context.root, [...profileArgs, ...context.nodeArgs, join(context.root, 'packages/gateway/bin/tms.js'), 'worker'], { ...env, PORT: '0' }));
    }
    let firstSent: { at: number; sent: number } | null = null;
    const deadline = started + context.timeoutSeconds * 1000;
    let statuses: Record<string, number> = before;
    let lastSay = started;
    for (;;) {
      statuses = await counter.statuses();
      const now = performance.now();
      const sent = statuses.sent ?? 0;
      if (firstSent === null && sent > 0) firstSent = { at: now, sent };
      const pending = (statuses.queued ?? 0) + (statuses.sending ?? 0);
      if (pending === 0) break;
      const dead = workers.find((w) => w.child.exitCode !== null || w.child.signalCode !== null);
      if (dead) throw new Error(`a worker exited early (${dead.child.exitCode ?? dead.child.signalCode}):\n${lastLines(dead.output())}`);
      if (now > deadline) throw new Error(`timed out after ${context.timeoutSeconds} s: ${JSON.stringify(statuses)}`);
      if (now - lastSay > 5000) {
        say(`  ${((now - started) / 1000).toFixed(0)} s: ${JSON.stringify(statuses)}`);
        lastSay = now;
      }
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    const ended = performance.now();
    result.statuses = statuses;
    result.seconds = (ended - started) / 1000;
    result.messagesPerSecond = (statuses.sent ?? 0) / result.seconds;
    if (firstSent && ended > firstSent.at) result.steadyMessagesPerSecond = ((statuses.sent ?? 0) - firstSent.sent) / ((ended - firstSent.at) / 1000);
    result.workerPeakRssMb = workers.map((w) => readPeakRssMb(w.child.pid!));
    result.workerCpuSeconds = workers.map((w) => readCpuSeconds(w.child.pid!));
    result.distinctProviderIds = await counter.distinctProviderIds();
    if ((statuses.sent ?? 0) !== context.messages) result.problems.push(`only ${statuses.sent ?? 0} of ${context.messages} sent: ${JSON.stringify(statuses)}`);
    if (result.distinctProviderIds !== (statuses.sent ?? 0)) result.problems.push(`${result.distinctProviderIds} distinct provider msg_ids for ${statuses.sent ?? 0} sent rows`);
    say(`  done in ${result.seconds.toFixed(2)} s: ${result.messagesPerSecond.toFixed(0)} messages/s (${result.steadyMessagesPerSecond.toFixed(0)} from the first send)`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    result.problems.push(`did not complete: ${message.split('\n').slice(0, 20).join('\n')}`);
  } finally {
    if (api) await api.stop();
    for (const [i, worker] of workers.entries()) {
      const code = await worker.stop();
      if (code !== 0) result.problems.push(`worker ${i + 1} exited with ${code}: ${worker.output().split('\n').slice(-8).join('\n')}`);
    }
    await counter?.close();
    try {
      const stats = (await expectOk('sim stats', json(`${sim.url}/_control/stats`, 'GET'))) as {
        sends: { received: number; accepted: number; rejected: number; duplicate_tracking_ids: number; duplicate_accepts: number };
      };
      const s = stats.sends;
      result.sim = { received: s.received, accepted: s.accepted, rejected: s.rejected, duplicateTrackingIds: s.duplicate_tracking_ids, duplicateAccepts: s.duplicate_accepts };
      if (s.duplicate_accepts > 0) result.problems.push(`DUPLICATE SENDS: ${s.duplicate_tracking_ids} tracking_ids accepted more than once (${s.duplicate_accepts} extra accepts)`);
      if (result.seconds > 0 && s.accepted !== context.messages) result.problems.push(`the simulator accepted ${s.accepted} sends for ${context.messages} messages`);
    } catch (error) {
      result.problems.push(`simulator stats: ${error instanceof Error ? error.message : String(error)}`);
    }
    await sim.child.stop();
    await database.drop();
  }
  return result;
}

export function dispatchTable(results: DispatchResult[]): string {
  const header = ['scenario', 'store', 'workers', 'latency', 'messages', 'seconds', 'msg/s', 'msg/s after 1st send', 'worker peak RSS MB', 'worker CPU s', 'sim accepted', 'duplicates'];
  const rows = results.map((r) => [
    r.id,
    r.store,
    String(r.workers),
    `${r.latencyMs} ms`,
    fmt(r.messages),
    fmt(r.seconds, 2),
    fmt(r.messagesPerSecond),
    fmt(r.steadyMessagesPerSecond),
    r.workerPeakRssMb.map((v) => fmt(v)).join(' / ') || '-',
    r.workerCpuSeconds.map((v) => fmt(v, 1)).join(' / ') || '-',
    r.sim ? fmt(r.sim.accepted) : '-',
    r.sim ? fmt(r.sim.duplicateAccepts) : '-',
  ]);
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((cells) => cells[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export interface DispatchTarget {
  text: string;
  met: boolean | null;
}

/** Dispatch targets: one worker ≥ 3,000/s at once, ≥ 2,000/s at 50 ms; two workers never send twice. */
export function dispatchTargets(results: DispatchResult[]): DispatchTarget[] {
  const targets: DispatchTarget[] = [];
  for (const r of results) {
    const valid = r.problems.length === 0;
    if (r.workers === 1) {
      const goal = r.latencyMs === 0 ? 3000 : 2000;
      targets.push({ text: `${r.id}: ≥ ${goal.toLocaleString('en-US')} messages/s from one worker process (measured ${fmt(r.messagesPerSecond)})`, met: valid ? r.messagesPerSecond >= goal : null });
    } else {
      targets.push({ text: `${r.id}: ${r.workers} workers never send a message twice (${r.sim ? `${fmt(r.sim.duplicateAccepts)} duplicate accepts` : 'no stats'})`, met: r.sim && r.seconds > 0 ? r.sim.duplicateAccepts === 0 && r.problems.length === 0 : null });
    }
  }
  return targets;
}
