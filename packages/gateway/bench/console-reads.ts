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
import pg from 'pg';
import pino from 'pino';
import { Pool } from 'undici';
import { parseConfig } from '../src/config/config.ts';
import { carrierOf } from '../src/lib/phone.ts';
import { VIETNAM_OFFSET_MS } from '../src/lib/vietnam-time.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { createApiKey } from '../src/services/admin/api-keys.ts';
import { connectSenderAccount } from '../src/services/admin/sender-accounts.ts';
import { registerTemplate } from '../src/services/admin/templates.ts';
import { createWorkspace } from '../src/services/admin/workspaces.ts';
import { acceptInvitation, inviteConsoleUser } from '../src/services/console/users.ts';
import { openSqliteDatabase, type SqliteConnection } from '../src/store/sqlite-driver.ts';
import { benchGatewayEnvironment, freePort, startServer, type ServerProcess } from './processes.ts';
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

const DAY_MS = 86_400_000;
const HISTORY_DAYS = 90;
const WARMUP_REQUESTS = 20;
/** How long the gateway reuses a big workspace's overview counts (REUSE_MS in caches/message-counts.ts). */
const OVERVIEW_COUNTS_REUSE_MS = 10_000;
/** Overviews measured with their counts made afresh: each costs a wait of 11 s. */
const FRESH_OVERVIEWS = 8;
const MESSAGES_PER_CHARGE = 50;
const OTHER_WORKSPACES = 3;
const DISTINCT_PHONES = 5000;
const CHUNK_ROWS = 20_000;
const PASSWORD = 'bench-console-password';
const WEBHOOK_URL = 'https://hooks.example.com/tms/reports';

/** A small, fast, seeded generator: the same data on every run and on both stores. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** An id of the gateway's shape (prefix, 10 characters of time, 16 random), from the given time. */
function sortableId(prefix: string, time: number, random: () => number): string {
  let remaining = time;
  let timePart = '';
  for (let index = 0; index < 10; index += 1) {
    timePart = CROCKFORD[remaining % 32] + timePart;
    remaining = Math.floor(remaining / 32);
  }
  let randomPart = '';
  // 30 random bits give six characters: three draws for sixteen.
  for (let draw = 0; draw < 3; draw += 1) {
    let bits = Math.floor(random() * 1_073_741_824);
    for (let character = 0; character < 6 && randomPart.length < 16; character += 1) {
      randomPart += CROCKFORD[bits & 31];
      bits >>>= 5;
    }
  }
  return `${prefix}_${timePart}${randomPart}`;
}

const vietnamDays = new Map<number, string>();
/** YYYY-MM-DD in Vietnam time; cached per day, as a million messages share 90 of them. */
function vietnamDayOf(epochMs: number): string {
  const dayNumber = Math.floor((epochMs + VIETNAM_OFFSET_MS) / DAY_MS);
  let day = vietnamDays.get(dayNumber);
  if (day === undefined) {
    day = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    vietnamDays.set(dayNumber, day);
  }
  return day;
}
/** The first instant of the Vietnam day `daysAgo` days before the one holding `now`. */
const vietnamMidnight = (now: number, daysAgo: number): number => (Math.floor((now + VIETNAM_OFFSET_MS) / DAY_MS) - daysAgo) * DAY_MS - VIETNAM_OFFSET_MS;

type Column = { name: string; type: 'text' | 'bigint' };
const text = (name: string): Column => ({ name, type: 'text' });
const bigint = (name: string): Column => ({ name, type: 'bigint' });

const MESSAGE_COLUMNS: Column[] = [
  text('id'), text('workspace_id'), text('api_key_id'), text('tracking_id'), text('status'), text('mode'), text('phone'), text('carrier'),
  text('rsa_phone'), text('source'), text('template_id'), text('oa_id'), text('template_data'), bigint('price'), text('quota_day'),
  text('provider_msg_id'), bigint('error_code'), text('error_message'), text('error_reason'), bigint('due_at'), bigint('scheduled_at'),
  bigint('attempts'), bigint('lease_expires_at'), bigint('sent_at'), bigint('delivered_at'), bigint('failed_at'), bigint('created_at'),
  bigint('updated_at'), bigint('unconfirmed_since'), bigint('status_checked_at'),
];
const LEDGER_COLUMNS: Column[] = [
  text('id'), text('workspace_id'), text('kind'), bigint('amount'), bigint('balance_after'), bigint('message_count'), text('reference'), text('note'), bigint('created_at'),
];
const DELIVERY_COLUMNS: Column[] = [
  text('id'), text('message_id'), text('workspace_id'), text('api_key_id'), text('url'), text('body'), text('status'), bigint('attempts'),
  bigint('attempts_at_redelivery'), bigint('next_attempt_at'), bigint('lease_expires_at'), bigint('last_status_code'), text('last_error'),
  bigint('delivered_at'), bigint('failed_at'), bigint('created_at'), bigint('updated_at'),
];

type Cell = string | number | null;

/**
 * Where grown rows go: the store's fastest bulk path. The messages table's secondary indexes are
 * dropped while it grows and made again from their own definitions afterwards: building an index
 * from a million rows at once is several times faster than keeping ten indexes up to date row by row.
 */
interface BulkSink {
  /** Drops the secondary indexes of `table`; `restoreIndexes` makes them again. */
  dropIndexes(table: string): Promise<void>;
  restoreIndexes(): Promise<void>;
  insert(table: string, columns: Column[], rows: Cell[][]): Promise<void>;
  run(statement: string, parameters: Cell[]): Promise<void>;
  /** After growing: what a long-running database would have done by now. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

function sqliteSink(file: string): BulkSink {
  const db: SqliteConnection = openSqliteDatabase(file);
  // Only while growing: a crash here loses a benchmark's scratch database, nothing else.
  db.pragma('synchronous = OFF');
  const statements = new Map<string, ReturnType<SqliteConnection['prepare']>>();
  let dropped: string[] = [];
  return {
    dropIndexes: async (table) => {
      const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(table) as { name: string; sql: string }[];
      for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
      dropped = indexes.map((index) => index.sql);
    },
    restoreIndexes: async () => {
      for (const definition of dropped) db.exec(definition);
      dropped = [];
    },
    insert: async (table, columns, rows) => {
      let statement = statements.get(table);
      if (!statement) {
        statement = db.prepare(`INSERT INTO ${table} (${columns.map((column) => column.name).join(',')}) VALUES (${columns.map(() => '?').join(',')})`);
        statements.set(table, statement);
      }
      const prepared = statement;
      db.transaction(() => {
        for (const row of rows) prepared.run(row);
      })();
    },
    run: async (statement, parameters) => {
      db.prepare(statement).run(parameters);
    },
    finish: async () => {
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    close: async () => {
      db.close();
    },
  };
}

async function postgresSink(url: string): Promise<BulkSink> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET synchronous_commit = off');
  await client.query("SET maintenance_work_mem = '256MB'");
  let dropped: string[] = [];
  return {
    dropIndexes: async (table) => {
      const indexes = await client.query<{ indexname: string; indexdef: string }>(
        'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname NOT IN (SELECT conname FROM pg_constraint)',
        [table],
      );
      for (const index of indexes.rows) await client.query(`DROP INDEX ${index.indexname}`);
      dropped = indexes.rows.map((index) => index.indexdef);
    },
    restoreIndexes: async () => {
      for (const definition of dropped) await client.query(definition);
      dropped = [];
    },
    // One JSON text per chunk: V8 writes it and the server reads it far faster than 30 array parameters.
    insert: async (table, columns, rows) => {
      const records = rows.map((row) => {
        const record: Record<string, Cell> = {};
        for (const [index, column] of columns.entries()) if (row[index] !== null) record[column.name] = row[index]!;
        return record;
      });
      const names = columns.map((column) => column.name).join(',');
      await client.query(`INSERT INTO ${table} (${names}) SELECT ${names} FROM json_populate_recordset(null::${table}, $1::json)`, [JSON.stringify(records)]);
    },
    run: async (statement, parameters) => {
      let index = 0;
      await client.query(statement.replace(/\?/g, () => `$${(index += 1)}`), parameters);
    },
    finish: async () => {
      await client.query('VACUUM ANALYZE');
    },
    close: async () => {
      await client.end();
    },
  };
}

interface SeededTemplate {
  templateId: string;
  oaId: string;
  price: number;
  /** Share of the workspace's messages sent with it. */
  share: number;
  data: (random: () => number) => string;
}

interface SeededWorkspace {
  workspaceId: string;
  apiKeyId: string;
  apiKey: string;
  templates: SeededTemplate[];
  phonePrefix: string;
}

interface Seeded {
  big: SeededWorkspace;
  others: SeededWorkspace[];
  email: string;
}

const FAILURES = [
  { code: -118, message: 'Zalo account not existed', reason: 'Tài khoản Zalo không tồn tại hoặc đã bị vô hiệu hoá' },
  { code: -108, message: 'Phone number invalid', reason: 'Số điện thoại không hợp lệ' },
  { code: -124, message: 'Message exceeds the quota of this phone', reason: 'Số điện thoại đã nhận quá số tin cho phép' },
  { code: -139, message: 'User refused to receive ZNS', reason: 'Người dùng đã từ chối nhận tin ZNS' },
];

const NAMES = ['Nguyễn Văn An', 'Trần Thị Bình', 'Lê Hoàng Cường', 'Phạm Minh Dũng', 'Võ Thị Hạnh', 'Đặng Quốc Huy'];

/** Workspaces, sender accounts, templates and keys through the services; the console owner through an invitation. */
async function seed(env: Record<string, string>, stamp: string): Promise<Seeded> {
  const runtime = await createRuntime(parseConfig(env), { log: pino({ level: 'silent' }) });
  try {
    const ctx = runtime.contextFor({ kind: 'operator' });
    const makeWorkspace = async (name: string, index: number, templateCount: number, oaCount: number): Promise<SeededWorkspace> => {
      const workspace = await createWorkspace({ ctx, input: { name } });
      const oaIds: string[] = [];
      for (let oa = 0; oa < oaCount; oa += 1) {
        const oaId = `43182697${stamp}${index}${oa}`;
        await connectSenderAccount({
          ctx,
          input: { workspaceId: workspace.id, oa_id: oaId, name: `Shop ${index}.${oa}`, daily_quota: 500_000, app_id: `app${stamp}${index}${oa}`, app_secret: 'app-secret', refresh_token: 'refresh-token' },
        });
        oaIds.push(oaId);
      }
      const shapes = [
        {
          name: 'Xác nhận đơn hàng',
          price: 300,
          share: 0.6,
          params: [
            { name: 'customer_name', type: 'STRING', required: true, min_length: 1, max_length: 30 },
            { name: 'order_code', type: 'STRING', required: true, min_length: 1, max_length: 20 },
          ],
          data: (random: () => number) => JSON.stringify({ customer_name: NAMES[Math.floor(random() * NAMES.length)], order_code: `DH${Math.floor(random() * 1e8)}` }),
        },
        {
          name: 'Mã OTP',
          price: 220,
          share: 0.25,
          params: [{ name: 'otp', type: 'NUMBER', required: true, min_length: 6, max_length: 6 }],
          data: (random: () => number) => JSON.stringify({ otp: String(100_000 + Math.floor(random() * 900_000)) }),
        },
        {
          name: 'Thông báo giao hàng',
          price: 450,
          share: 0.15,
          params: [
            { name: 'customer_name', type: 'STRING', required: true, min_length: 1, max_length: 30 },
            { name: 'delivery_date', type: 'DATE', required: true, min_length: 10, max_length: 10 },
          ],
          data: (random: () => number) => JSON.stringify({ customer_name: NAMES[Math.floor(random() * NAMES.length)], delivery_date: `2026-11-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}` }),
        },
      ].slice(0, templateCount);
      const shareSum = shapes.reduce((sum, shape) => sum + shape.share, 0);
      const templates: SeededTemplate[] = [];
      for (const [position, shape] of shapes.entries()) {
        const templateId = `${stamp}${index}${position}`;
        // The first two templates on the first sender account, the third on the second.
        const oaId = oaIds[Math.min(oaIds.length - 1, position >= 2 ? 1 : 0)]!;
        await registerTemplate({
          ctx,
          input: { workspaceId: workspace.id, template_id: templateId, name: shape.name, status: 'ENABLE', template_type: 1, oa_id: oaId, preview_url: 'https://example.com/preview', params: shape.params, price: shape.price },
        });
        templates.push({ templateId, oaId, price: shape.price, share: shape.share / shareSum, data: shape.data });
      }
      const key = await createApiKey({ ctx, input: { workspaceId: workspace.id, name: 'shop backend', scopes: ['messages:send', 'messages:read', 'templates:read'], webhook_url: WEBHOOK_URL } });
      return { workspaceId: workspace.id, apiKeyId: key.row.id, apiKey: key.secret, templates, phonePrefix: ['98', '91', '90', '70'][index % 4]! };
    };
    const big = await makeWorkspace('bench console: a million messages', 0, 3, 2);
    const others: SeededWorkspace[] = [];
    for (let index = 1; index <= OTHER_WORKSPACES; index += 1) others.push(await makeWorkspace(`bench console: neighbour ${index}`, index, 1, 1));
    const email = `owner.${stamp}@bench.example.com`;
    const invitation = await inviteConsoleUser({ ctx, input: { workspaceId: big.workspaceId, email, role: 'owner', origin: 'http://127.0.0.1' } });
    const token = invitation.invitationUrl.slice(invitation.invitationUrl.lastIndexOf('/') + 1);
    await acceptInvitation({ ctx: runtime.contextFor({ kind: 'anonymous' }), input: { token, password: PASSWORD } });
    return { big, others, email };
  } finally {
    await runtime.close();
  }
}

const STATUS_CODES = ['delivered', 'failed', 'sent', 'queued', 'scheduled'] as const;

/** What one workspace's history looks like once grown: values the reads then ask for. */
interface Grown {
  messages: number;
  ledger: number;
  deliveries: number;
  /** Tracking ids and phones of its messages, spread over its history. */
  sampleTrackingIds: string[];
  samplePhones: string[];
}

/**
 * One workspace's history, in creation order: `count` messages (queued and scheduled ones from the
 * last two days, the rest over 90 days), a charge per 50 messages after a top-up each 30 days,
 * delivery reports for every tenth delivered message, and the workspace's balance and count to match.
 */
async function growWorkspace(sink: BulkSink, workspace: SeededWorkspace, count: number, now: number, seedValue: number): Promise<Grown> {
  const random = seededRandom(seedValue);
  const start = now - HISTORY_DAYS * DAY_MS;
  // Creation time and status packed in one number, so one typed-array sort orders both.
  const packed = new Float64Array(count);
  for (let index = 0; index < count; index += 1) {
    const draw = random();
    const status = draw < 0.85 ? 0 : draw < 0.93 ? 1 : draw < 0.97 ? 2 : draw < 0.99 ? 3 : 4;
    const createdAt = status >= 3 ? now - Math.floor(random() * 2 * DAY_MS) : start + Math.floor(random() * (HISTORY_DAYS * DAY_MS - 60_000));
    packed[index] = createdAt * 8 + status;
  }
  packed.sort();

  const today = vietnamDayOf(now);
  const quotaToday = new Map<string, number>();
  let balance = 0;
  let nextTopUp = start;
  let pendingCharge: { id: string; amount: number; count: number; createdAt: number } | null = null;
  const grown: Grown = { messages: count, ledger: 0, deliveries: 0, sampleTrackingIds: [], samplePhones: [] };
  const sampleEvery = Math.max(1, Math.floor(count / 50));
  let messages: Cell[][] = [];
  let ledger: Cell[][] = [];
  let deliveries: Cell[][] = [];
  const flush = async (force: boolean) => {
    if (messages.length >= CHUNK_ROWS || (force && messages.length > 0)) {
      await sink.insert('messages', MESSAGE_COLUMNS, messages);
      messages = [];
    }
    if (ledger.length >= CHUNK_ROWS || (force && ledger.length > 0)) {
      await sink.insert('wallet_ledger', LEDGER_COLUMNS, ledger);
      grown.ledger += ledger.length;
      ledger = [];
    }
    if (deliveries.length >= CHUNK_ROWS || (force && deliveries.length > 0)) {
      await sink.insert('webhook_deliveries', DELIVERY_COLUMNS, deliveries);
      grown.deliveries += deliveries.length;
      deliveries = [];
    }
  };
  const closeCharge = () => {
    if (!pendingCharge) return;
    balance -= pendingCharge.amount;
    ledger.push([sortableId('led', pendingCharge.createdAt, random), workspace.workspaceId, 'charge', -pendingCharge.amount, balance, pendingCharge.count, pendingCharge.id, null, pendingCharge.createdAt]);
    pendingCharge = null;
  };

  for (let index = 0; index < count; index += 1) {
    const value = packed[index]!;
    const status = STATUS_CODES[value % 8]!;
    const createdAt = Math.floor(value / 8);
    while (createdAt >= nextTopUp) {
      closeCharge();
      const amount = 150_000_000;
      balance += amount;
      ledger.push([sortableId('led', nextTopUp, random), workspace.workspaceId, 'top_up', amount, balance, 0, null, 'chuyển khoản', nextTopUp]);
      nextTopUp += 30 * DAY_MS;
    }
    const draw = random();
    let templateIndex = 0;
    for (let cumulative = workspace.templates[0]!.share; draw > cumulative && templateIndex < workspace.templates.length - 1; ) cumulative += workspace.templates[(templateIndex += 1)]!.share;
    const template = workspace.templates[templateIndex]!;
    const phone = `84${workspace.phonePrefix}${String(1_000_000 + ((Math.floor(random() * DISTINCT_PHONES) * 7919) % 9_000_000)).padStart(7, '0')}`;
    const id = sortableId('msg', createdAt, random);
    const trackingId = `DH-${vietnamDayOf(createdAt).replaceAll('-', '')}-${String(index).padStart(7, '0')}`;
    if (index % sampleEvery === sampleEvery >> 1) {
      grown.sampleTrackingIds.push(trackingId);
      grown.samplePhones.push(phone);
    }
    const handedOver = status === 'delivered' || status === 'sent' || status === 'failed';
    const sentAt = handedOver ? createdAt + 200 + Math.floor(random() * 3000) : null;
    const failure = status === 'failed' ? FAILURES[Math.floor(random() * FAILURES.length)]! : null;
    // Half the failures are refused by the platform at once (never sent); the others fail after sending.
    const refused = failure !== null && random() < 0.5;
    const deliveredAt = status === 'delivered' ? sentAt! + 1000 + Math.floor(random() * 20_000) : null;
    const failedAt = failure ? (refused ? createdAt + 400 : sentAt! + 2000) : null;
    const scheduledAt = status === 'scheduled' ? createdAt + DAY_MS + Math.floor(random() * 6 * DAY_MS) : null;
    const quotaDay = handedOver && !refused ? vietnamDayOf(sentAt!) : null;
    if (quotaDay === today) quotaToday.set(template.oaId, (quotaToday.get(template.oaId) ?? 0) + 1);
    messages.push([
      id,
      workspace.workspaceId,
      workspace.apiKeyId,
      trackingId,
      status === 'scheduled' ? 'queued' : status,
      'plain',
      phone,
      carrierOf(phone),
      null,
      random() < 0.05 ? 'console' : 'api',
      template.templateId,
      template.oaId,
      template.data(random),
      template.price,
      quotaDay,
      quotaDay === null ? null : `${(createdAt % 1e9).toString(16)}${Math.floor(random() * 1e9).toString(16)}`,
      failure?.code ?? null,
      failure?.message ?? null,
      failure?.reason ?? null,
      scheduledAt ?? createdAt,
      scheduledAt,
      handedOver ? 1 : 0,
      null,
      refused ? null : sentAt,
      deliveredAt,
      failedAt,
      createdAt,
      deliveredAt ?? failedAt ?? sentAt ?? createdAt,
      null,
      null,
    ]);
    if (status === 'delivered' && index % 10 === 0) {
      const body = JSON.stringify({ message_id: id, tracking_id: trackingId, status: 'delivered', phone, delivered_at: new Date(deliveredAt!).toISOString() });
      deliveries.push([sortableId('whd', deliveredAt!, random), id, workspace.workspaceId, workspace.apiKeyId, WEBHOOK_URL, body, 'delivered', 1, 0, deliveredAt!, null, 200, null, deliveredAt! + 80, null, deliveredAt!, deliveredAt! + 80]);
    }
    if (!pendingCharge) pendingCharge = { id, amount: 0, count: 0, createdAt };
    pendingCharge.amount += template.price;
    pendingCharge.count += 1;
    if (pendingCharge.count === MESSAGES_PER_CHARGE) closeCharge();
    if (messages.length >= CHUNK_ROWS) await flush(false);
  }
  closeCharge();
  await flush(true);
  await sink.run('UPDATE workspaces SET balance = ?, messages_accepted = ? WHERE id = ?', [balance, count, workspace.workspaceId]);
  for (const [oaId, used] of quotaToday) await sink.run('INSERT INTO quota_reservations (oa_id, day, reserved) VALUES (?, ?, ?)', [oaId, today, used]);
  return grown;
}

/** One read of the console, with the values it rotates through. */
interface Read {
  query: string;
  paths: string[];
  /** Checks an answer; returns the rows it holds, or throws saying what is wrong. */
  check(body: unknown, path: string): number;
}

function objectOf(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error(`${what}: not a JSON object`);
  return body as Record<string, unknown>;
}

/** A message page: every message must match the filter asked for, newest first. */
function checkMessagePage(body: unknown, path: string, mayBeEmpty = false): number {
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

function messageReads(prefix: string, grown: Grown, seeded: SeededWorkspace, now: number): Read[] {
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
    read('messages: tracking_id', grown.sampleTrackingIds.map((id) => `?tracking_id=${encodeURIComponent(id)}`)),
    read('messages: phone', grown.samplePhones.map((phone) => `?phone=${phone}`)),
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
function percentile(sorted: number[], share: number): number {
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
      await sink.dropIndexes('messages');
      grown = await growWorkspace(sink, seeded.big, context.messages, now, 1);
      result.grown = { messages: grown.messages, wallet_ledger: grown.ledger, webhook_deliveries: grown.deliveries };
      for (const [index, other] of seeded.others.entries()) {
        const small = await growWorkspace(sink, other, Math.max(1, Math.round(context.messages * 0.02)), now, index + 2);
        result.grown.messages! += small.messages;
        result.grown.wallet_ledger! += small.ledger;
        result.grown.webhook_deliveries! += small.deliveries;
      }
      const rowsWritten = performance.now();
      await sink.restoreIndexes();
      const indexesMade = performance.now();
      await sink.finish();
      growPhases = `rows ${((rowsWritten - growStarted) / 1000).toFixed(1)} s, indexes ${((indexesMade - rowsWritten) / 1000).toFixed(1)} s, ${scenario.store === 'sqlite' ? 'checkpoint' : 'vacuum and analyse'} ${((performance.now() - indexesMade) / 1000).toFixed(1)} s`;
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
    if (ended) throw new Error(`the gateway ${ended}, during the run:\n${server.output().split('\n').slice(-16).join('\n')}`);
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
