/**
 * The console's reads on a big workspace: latency of the message list (newest page and each
 * filter), the overview and the wallet, on a workspace holding TMS_BENCH_CONSOLE_MESSAGES
 * (1,000,000) messages. The target: under 100 ms p99 each.
 *
 * Per store: a fresh database, migrated and seeded through the services (workspaces, sender
 * accounts, templates, API keys, a console owner who accepts an invitation), then grown by bulk
 * insert straight into the store (SQLite: better-sqlite3 on tms.sqlite; PostgreSQL: one
 * INSERT … SELECT FROM json_populate_recordset(…) per 20,000 rows), with the messages' secondary
 * indexes made afresh afterwards: the big workspace's messages (85% delivered, 8% failed, 4% sent,
 * 2% queued, 1% scheduled; created over 90 days, queued and scheduled ones in the last two; 2 sender
 * accounts, 3 templates, ~5,000 phones, a tracking id each), one charge per 50 messages in its
 * ledger, delivery reports for a tenth of its delivered messages, and three small workspaces beside it.
 * PostgreSQL is then vacuumed and analysed, as autovacuum would soon do; SQLite is left as the
 * gateway leaves it (it runs no ANALYZE).
 *
 * Then `tms api` starts on that database, the owner signs in over HTTP, and each read is asked
 * TMS_BENCH_CONSOLE_REQUESTS (200) times after 20 warm-up requests, one request at a time on one
 * connection, the reads taken in turn; the overview also 8 times with its counts made afresh (the
 * gateway reuses a big workspace's counts for 10 s), 11 s apart. The latency is measured by the
 * client on loopback: an upper bound of the server's time. While the console's message routes are not registered, the message
 * list is read from GET /api/v1/messages (same filters, same store query) with an API key, and
 * a console read that answers 404 is reported as not available.
 */
import { join } from 'node:path';
import pino from 'pino';
import { Pool } from 'undici';
import { parseConfig } from '../src/config/config.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { acceptInvitation, inviteConsoleUser } from '../src/services/console/users.ts';
import { CONSOLE_HISTORY, DAY_MS, growStore, postgresSink, seedBenchWorkspace, sqliteSink, vietnamMidnight, type Grown, type SeededWorkspace } from './grown-store-data.ts';
import { benchGatewayEnvironment, freePort, lastLines, startServer, type ServerProcess } from './processes.ts';
import { fmt } from './report.ts';
import type * as Harness from '../test/harness.ts';

export const CONSOLE_READ_SCENARIOS = [
  { id: 'console-reads-sqlite', store: 'sqlite' },
  { id: 'console-reads-postgres', store: 'postgres' },
] as const;

export type ConsoleReadScenario = (typeof CONSOLE_READ_SCENARIOS)[number];

/** p99 of each read, in milliseconds, that the console must stay under. */
export const CONSOLE_READ_TARGET_P99_MS = 100;

export interface ConsoleReadContext {
  root: string;
  harness: typeof Harness;
  /** Messages in the big workspace. */
  messages: number;
  /** Measured requests per read (after the warm-up). */
  requests: number;
  /** Leave the grown database in place afterwards (to read query plans in it), and say where. */
  keepDatabase: boolean;
  extraEnv: Record<string, string>;
  nodeArgs: string[];
  say(text: string): void;
}

export interface ConsoleReadTiming {
  query: string;
  /** The path asked (the first of the values it rotates through). */
  path: string;
  /** Which API answered: the console's, or /api/v1 while the console route is missing. */
  via: 'console' | 'api-v1' | 'not available';
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Rows in the last answer (messages, ledger entries or latest failures). */
  rows: number | null;
  pass: boolean | null;
}

export interface ConsoleReadsResult {
  id: string;
  store: 'sqlite' | 'postgres';
  messages: number;
  /** Rows written while growing the store, per table. */
  grown: Record<string, number>;
  growSeconds: number;
  queries: ConsoleReadTiming[];
  peakRssMb: number | null;
  problems: string[];
}

const WARMUP_REQUESTS = 20;
/** How long the gateway reuses a big workspace's overview counts (REUSE_MS in caches/message-counts.ts). */
const OVERVIEW_COUNTS_REUSE_MS = 10_000;
/** Overviews measured with their counts made afresh: each costs a wait of 11 s. */
const FRESH_OVERVIEWS = 8;
const OTHER_WORKSPACES = 3;
const PASSWORD = 'bench-console-password';

interface Seeded {
  big: SeededWorkspace;
  others: SeededWorkspace[];
  email: string;
}

/** Workspaces, sender accounts, templates and keys through the services; the console owner through an invitation. */
async function seed(env: Record<string, string>, stamp: string): Promise<Seeded> {
  const runtime = await createRuntime(parseConfig(env), { log: pino({ level: 'silent' }) });
  try {
    const ctx = runtime.contextFor({ kind: 'operator' });
    const big = await seedBenchWorkspace(runtime, { name: 'bench console: a million messages', stamp, index: 0, templateCount: 3, oaCount: 2 });
    const others: SeededWorkspace[] = [];
    for (let index = 1; index <= OTHER_WORKSPACES; index += 1) others.push(await seedBenchWorkspace(runtime, { name: `bench console: neighbour ${index}`, stamp, index, templateCount: 1, oaCount: 1 }));
    const email = `owner.${stamp}@bench.example.com`;
    const invitation = await inviteConsoleUser({ ctx, input: { workspaceId: big.workspaceId, email, role: 'owner', origin: 'http://127.0.0.1' } });
    const token = invitation.invitationUrl.slice(invitation.invitationUrl.lastIndexOf('/') + 1);
    await acceptInvitation({ ctx: runtime.contextFor({ kind: 'anonymous' }), input: { token, password: PASSWORD } });
    return { big, others, email };
  } finally {
    await runtime.close();
  }
}

/** One read of the console, with the values it rotates through. */
export interface Read {
  query: string;
  paths: string[];
  /** Checks an answer; returns the rows it holds, or throws saying what is wrong. */
  check(body: unknown, path: string): number;
}

export function objectOf(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error(`${what}: not a JSON object`);
  return body as Record<string, unknown>;
}

/** A message page: every message must match the filter asked for, newest first. */
export function checkMessagePage(body: unknown, path: string, mayBeEmpty = false): number {
  const page = objectOf(body, path);
  const messages = page.messages;
  if (!Array.isArray(messages)) throw new Error(`${path}: no messages array`);
  if (messages.length === 0 && !mayBeEmpty) throw new Error(`${path}: no messages (the grown data has some for this read)`);
  const query = new URL(path, 'http://bench').searchParams;
  let previous = Number.POSITIVE_INFINITY;
  for (const item of messages) {
    const message = objectOf(item, path);
    const createdAt = Date.parse(String(message.created_at));
    if (createdAt > previous) throw new Error(`${path}: not newest first`);
    previous = createdAt;
    for (const field of ['status', 'tracking_id', 'phone', 'template_id', 'oa_id'] as const) {
      const wanted = query.get(field);
      if (wanted !== null && message[field] !== wanted) throw new Error(`${path}: a message with ${field} ${String(message[field])}`);
    }
    const from = query.get('from');
    const to = query.get('to');
    if ((from !== null && createdAt < Date.parse(from)) || (to !== null && createdAt > Date.parse(to))) throw new Error(`${path}: a message created ${String(message.created_at)}`);
  }
  return messages.length;
}

export function messageReads(prefix: string, grown: Grown, seeded: SeededWorkspace, now: number): Read[] {
  const samples = grown.samples.get(seeded.workspaceId)!;
  const dayStart = vietnamMidnight(now, 30);
  const dayEnd = dayStart + DAY_MS - 1;
  const iso = (time: number) => new Date(time).toISOString();
  const read = (query: string, paths: string[]): Read => ({ query, paths: paths.map((path) => `${prefix}${path}`), check: checkMessagePage });
  const template = seeded.templates[2] ?? seeded.templates[0]!;
  return [
    read('messages: newest page', ['']),
    read('messages: status=failed', ['?status=failed']),
    read('messages: status=queued', ['?status=queued']),
    // No message is being sent while the workers are stopped: an index that cannot answer this
    // alone walks the whole workspace to find that out.
    { query: 'messages: status=sending (none)', paths: [`${prefix}?status=sending`], check: (body, path) => checkMessagePage(body, path, true) },
    read('messages: tracking_id', samples.trackingIds.map((id) => `?tracking_id=${encodeURIComponent(id)}`)),
    read('messages: phone', samples.phones.map((phone) => `?phone=${phone}`)),
    read('messages: template_id (15% of them)', [`?template_id=${template.templateId}`]),
    read('messages: oa_id', [`?oa_id=${template.oaId}`]),
    read('messages: from/to, one day 30 days ago', [`?from=${iso(dayStart)}&to=${iso(dayEnd)}`]),
    read('messages: status=failed&from (30 days)', [`?status=failed&from=${iso(dayStart)}`]),
  ];
}

const overviewRead: Read = {
  query: 'overview',
  paths: ['/console/api/overview'],
  check: (body, path) => {
    const overview = objectOf(body, path);
    const failures = overview.latest_failures;
    if (!Array.isArray(failures) || failures.length === 0) throw new Error(`${path}: no latest failures`);
    if (!Array.isArray(overview.delivery_rate) || overview.delivery_rate.length !== 7) throw new Error(`${path}: delivery_rate is not 7 days`);
    return failures.length;
  },
};

const walletRead: Read = {
  query: 'wallet (ledger, newest page)',
  paths: ['/console/api/wallet'],
  check: (body, path) => {
    const wallet = objectOf(body, path);
    if (!Array.isArray(wallet.ledger) || wallet.ledger.length === 0) throw new Error(`${path}: an empty ledger`);
    return wallet.ledger.length;
  },
};

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}

async function signIn(url: string, email: string): Promise<string> {
  const response = await fetch(`${url}/console/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
  const answer = await response.text();
  if (response.status !== 200) throw new Error(`console sign-in: ${response.status} ${answer.slice(0, 300)}`);
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('tms_console_session='));
  if (!cookie) throw new Error('console sign-in: no tms_console_session cookie');
  return cookie.slice(0, cookie.indexOf(';'));
}

export async function runConsoleReads(scenario: ConsoleReadScenario, context: ConsoleReadContext): Promise<ConsoleReadsResult> {
  const { harness, say } = context;
  const result: ConsoleReadsResult = { id: scenario.id, store: scenario.store, messages: context.messages, grown: {}, growSeconds: 0, queries: [], peakRssMb: null, problems: [] };
  say(`${scenario.id}: ${context.messages.toLocaleString('en-US')} messages in one workspace on ${scenario.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${context.requests} requests per read`);
  const database = await harness.createTestDatabase(scenario.store);
  let server: ServerProcess | null = null;
  let pool: Pool | null = null;
  try {
    const env = benchGatewayEnvironment(harness, database, { TMS_TEMPLATE_SYNC_MS: '0', ...context.extraEnv });
    const stamp = String(Date.now() % 1e8).padStart(8, '0');
    const seeded = await seed(env, stamp);
    const now = Date.now();

    const growStarted = performance.now();
    let growPhases = '';
    const sink = scenario.store === 'sqlite' ? sqliteSink(join(database.env.TMS_DATA_DIR!, 'tms.sqlite')) : await postgresSink(database.env.DATABASE_URL!);
    let grown: Grown;
    try {
      const plans = [seeded.big, ...seeded.others].map((workspace, index) => ({ workspace, messages: index === 0 ? context.messages : Math.max(1, Math.round(context.messages * 0.02)), seed: index + 1 }));
      grown = await growStore(sink, plans, now, { ...CONSOLE_HISTORY, interleave: false });
      result.grown = { messages: grown.rows.messages, wallet_ledger: grown.rows.wallet_ledger, webhook_deliveries: grown.rows.webhook_deliveries };
      const indexesMade = performance.now();
      await sink.finish();
      growPhases = `rows ${grown.rowsSeconds.toFixed(1)} s, indexes ${grown.indexSeconds.toFixed(1)} s, ${sink.finishing} ${((performance.now() - indexesMade) / 1000).toFixed(1)} s`;
    } finally {
      await sink.close();
    }
    result.growSeconds = (performance.now() - growStarted) / 1000;
    say(`  grown in ${result.growSeconds.toFixed(1)} s (${growPhases}): ${Object.entries(result.grown).map(([table, rows]) => `${rows.toLocaleString('en-US')} ${table}`).join(', ')}`);

    server = await startServer({ cwd: context.root, script: join(context.root, 'packages/gateway/bin/tms.js'), args: ['api'], nodeArgs: context.nodeArgs, env, port: await freePort() });
    const cookie = await signIn(server.url, seeded.email);
    pool = new Pool(server.url, { connections: 1, pipelining: 1 });
    const client = pool;
    const get = async (path: string): Promise<{ status: number; text: string; ms: number }> => {
      const headers: Record<string, string> = path.startsWith('/api/v1/') ? { authorization: `Bearer ${seeded.big.apiKey}` } : { cookie };
      const started = performance.now();
      const response = await client.request({ method: 'GET', path, headers });
      const body = await response.body.text();
      return { status: response.statusCode, text: body, ms: performance.now() - started };
    };

    const consoleMessages = (await get('/console/api/messages?limit=1')).status === 200;
    if (!consoleMessages) say('  GET /console/api/messages is not there yet: the message list is read from GET /api/v1/messages');
    const reads = [...messageReads(consoleMessages ? '/console/api/messages' : '/api/v1/messages', grown, seeded.big, now), overviewRead, walletRead];
    const active: { read: Read; timing: ConsoleReadTiming; samples: number[] }[] = [];
    for (const read of reads) {
      const timing: ConsoleReadTiming = { query: read.query, path: read.paths[0]!, via: read.paths[0]!.startsWith('/api/v1/') ? 'api-v1' : 'console', requests: 0, p50Ms: Number.NaN, p99Ms: Number.NaN, maxMs: Number.NaN, rows: null, pass: null };
      result.queries.push(timing);
      const probe = await get(read.paths[0]!);
      if (probe.status === 404 && timing.via === 'console' && probe.text.includes('route_not_found')) {
        timing.via = 'not available';
        continue;
      }
      active.push({ read, timing, samples: [] });
    }
    const ask = async (entry: (typeof active)[number], round: number, keep: boolean) => {
      const path = entry.read.paths[round % entry.read.paths.length]!;
      const answer = await get(path);
      if (answer.status !== 200) throw new Error(`${entry.read.query}: GET ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
      entry.timing.rows = entry.read.check(JSON.parse(answer.text) as unknown, path);
      if (keep) entry.samples.push(answer.ms);
      return performance.now();
    };
    // The reads in turn, as people move between pages; each request alone on the connection.
    // When the overview's counts were last made: the warm-up's last overview, at the latest.
    let countedAt = 0;
    for (let round = 0; round < WARMUP_REQUESTS; round += 1) {
      for (const entry of active) {
        const answered = await ask(entry, round, false);
        if (entry.read === overviewRead) countedAt = answered;
      }
    }
    let round = 0;
    const roundsUntil = async (deadline: number) => {
      for (; round < context.requests && performance.now() < deadline; round += 1) for (const entry of active) await ask(entry, round + WARMUP_REQUESTS, true);
    };
    // The gateway reuses a big workspace's overview counts of today and yesterday for 10 s, and of
    // the older days for 10 minutes (caches/message-counts.ts), so the overview above is mostly
    // answered from memory. The first overview after 10 s, which counts today and yesterday
    // afresh, is measured on its own: the other reads run in between, stopping well before the
    // counts expire so that none of them pays for the new count.
    const overviewEntry = active.find((entry) => entry.read === overviewRead);
    if (overviewEntry) {
      const fresh: (typeof active)[number] = {
        read: overviewRead,
        timing: { ...overviewEntry.timing, query: 'overview, today and yesterday counted afresh' },
        samples: [],
      };
      result.queries.splice(result.queries.indexOf(overviewEntry.timing) + 1, 0, fresh.timing);
      overviewEntry.timing.query = 'overview, counts reused (< 10 s old)';
      for (let sample = 0; sample < FRESH_OVERVIEWS; sample += 1) {
        const wait = countedAt + OVERVIEW_COUNTS_REUSE_MS + 1000 - performance.now();
        if (wait > 0) await new Promise((resolveWait) => setTimeout(resolveWait, wait));
        countedAt = await ask(fresh, 0, true);
        await roundsUntil(countedAt + OVERVIEW_COUNTS_REUSE_MS - 2000);
      }
      active.push(fresh);
    }
    await roundsUntil(Number.POSITIVE_INFINITY);
    for (const { timing, samples } of active) {
      const sorted = [...samples].sort((a, b) => a - b);
      timing.requests = sorted.length;
      timing.p50Ms = percentile(sorted, 0.5);
      timing.p99Ms = percentile(sorted, 0.99);
      timing.maxMs = sorted[sorted.length - 1] ?? Number.NaN;
      timing.pass = timing.p99Ms < CONSOLE_READ_TARGET_P99_MS;
    }
    result.peakRssMb = server.peakRssMb();
    const ended = server.endedEarly();
    if (ended) throw new Error(`the gateway ${ended}, during the run:\n${lastLines(server.output())}`);
    for (const timing of result.queries) say(`  ${timing.query}: p50 ${fmt(timing.p50Ms, 1)} ms, p99 ${fmt(timing.p99Ms, 1)} ms, max ${fmt(timing.maxMs, 1)} ms (${timing.via})`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    result.problems.push(`did not complete: ${message.split('\n').slice(0, 16).join('\n')}`);
  } finally {
    await pool?.close();
    const code = await server?.stop();
    if (code !== undefined && code !== 0) result.problems.push(`gateway exited with ${code}`);
    if (context.keepDatabase) say(`  kept the database: ${database.env.DATABASE_URL ?? join(database.env.TMS_DATA_DIR!, 'tms.sqlite')}`);
    else await database.drop();
  }
  return result;
}

export function consoleReadsTable(results: ConsoleReadsResult[]): string {
  const header = ['store', 'read', 'via', 'rows', 'p50 ms', 'p99 ms', 'max ms', 'target', 'result'];
  const rows = results.flatMap((result) =>
    result.queries.map((timing) => [
      result.store,
      timing.query,
      timing.via,
      fmt(timing.rows),
      fmt(timing.p50Ms, 1),
      fmt(timing.p99Ms, 1),
      fmt(timing.maxMs, 1),
      `p99 < ${CONSOLE_READ_TARGET_P99_MS} ms`,
      timing.pass === null ? 'n/a' : timing.pass ? 'PASS' : 'FAIL',
    ]),
  );
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((cells) => cells[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export interface ConsoleReadTarget {
  text: string;
  met: boolean | null;
}

/** One target per store: every read under 100 ms p99 (n/a while a read is not available). */
export function consoleReadsTargets(results: ConsoleReadsResult[]): ConsoleReadTarget[] {
  return results.map((result) => {
    const slowest = result.queries.reduce<ConsoleReadTiming | null>((worst, timing) => (Number.isFinite(timing.p99Ms) && (worst === null || timing.p99Ms > worst.p99Ms) ? timing : worst), null);
    const missing = result.queries.filter((timing) => timing.via === 'not available').map((timing) => timing.query);
    const measured = slowest ? `slowest p99 ${fmt(slowest.p99Ms, 1)} ms, ${slowest.query}` : 'nothing measured';
    const text = `${result.id}: every console read < ${CONSOLE_READ_TARGET_P99_MS} ms p99 on ${result.messages.toLocaleString('en-US')} messages (${measured}${missing.length > 0 ? `; not available yet: ${missing.join(', ')}` : ''})`;
    if (result.problems.length > 0 || result.queries.some((timing) => timing.pass === false)) return { text, met: false };
    return { text, met: slowest === null || missing.length > 0 ? null : true };
  });
}
