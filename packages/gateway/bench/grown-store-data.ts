/**
 * A store grown by bulk insert, for the benchmarks that measure a gateway with history behind it
 * (console-reads.ts, grown-store.ts): seeded workspaces (through the services, like an operator
 * would), then months of messages with their ledger rows, delivery reports and idempotency records
 * written straight into the tables, far faster than through the API.
 *
 * The data is seeded-random: the same on every run and on both stores. A workspace's history:
 * - messages created over 90 days: 85% delivered, 8% failed (half refused by the platform at once,
 *   half failed after sending), 4% sent (no delivery event came), and 3% still queued, created in
 *   the last two days: either a backlog the workers have not reached (due now) or scheduled for
 *   the coming days, as a gateway whose workers keep up holds;
 * - ~5,000 phones per workspace, a tracking id per message, templates and sender accounts shared
 *   as a shop uses them (60/25/15%);
 * - the wallet: a top-up every 30 days, one charge per 50 messages;
 * - optionally delivery reports in the outbox (finished ones are purged after the retention), the
 *   platform's delivery event per delivered message (kept for ever, as the gateway keeps them) and
 *   idempotency records of the last 24 hours (purged after).
 */
import pg from 'pg';
import { carrierOf } from '../src/lib/phone.ts';
import { VIETNAM_OFFSET_MS } from '../src/lib/vietnam-time.ts';
import type { Runtime } from '../src/main/runtime.ts';
import { createApiKey } from '../src/services/admin/api-keys.ts';
import { connectSenderAccount } from '../src/services/admin/sender-accounts.ts';
import { registerTemplate } from '../src/services/admin/templates.ts';
import { createWorkspace } from '../src/services/admin/workspaces.ts';
import { openSqliteDatabase, type SqliteConnection } from '../src/store/sqlite-driver.ts';
import { DELIVERY_ID_PREFIX } from '../src/store/webhook-deliveries.ts';

export const DAY_MS = 86_400_000;
export const HISTORY_DAYS = 90;
const MESSAGES_PER_CHARGE = 50;
const DISTINCT_PHONES = 5000;
const CHUNK_ROWS = 20_000;
const IDEMPOTENCY_LIFETIME_MS = DAY_MS;
export const WEBHOOK_URL = 'https://hooks.example.com/tms/reports';

/** A small, fast, seeded generator: the same data on every run and on both stores. */
export function seededRandom(seed: number): () => number {
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
export function sortableId(prefix: string, time: number, random: () => number): string {
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
export function vietnamDayOf(epochMs: number): string {
  const dayNumber = Math.floor((epochMs + VIETNAM_OFFSET_MS) / DAY_MS);
  let day = vietnamDays.get(dayNumber);
  if (day === undefined) {
    day = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    vietnamDays.set(dayNumber, day);
  }
  return day;
}
/** The first instant of the Vietnam day `daysAgo` days before the one holding `now`. */
export const vietnamMidnight = (now: number, daysAgo: number): number => (Math.floor((now + VIETNAM_OFFSET_MS) / DAY_MS) - daysAgo) * DAY_MS - VIETNAM_OFFSET_MS;

export type Column = { name: string; type: 'text' | 'bigint' };
const text = (name: string): Column => ({ name, type: 'text' });
const bigint = (name: string): Column => ({ name, type: 'bigint' });

const MESSAGE_COLUMNS: Column[] = [
  text('id'), text('workspace_id'), text('api_key_id'), text('tracking_id'), text('mode'), text('phone'), text('carrier'), text('rsa_phone'),
  text('source'), text('template_id'), text('oa_id'), text('template_data'), bigint('price'), text('quota_day'), bigint('scheduled_at'),
  bigint('created_at'),
];
/** A message's state: its id, copies of its workspace, sender account, quota day and creation time, then what a send changes. */
const MESSAGE_STATE_COLUMNS: Column[] = [
  text('id'), text('workspace_id'), text('oa_id'), text('quota_day'), bigint('created_at'), text('status'), bigint('due_at'), bigint('attempts'),
  bigint('lease_expires_at'), bigint('unconfirmed_since'), text('provider_msg_id'), bigint('sent_at'), bigint('status_checked_at'),
  bigint('delivered_at'), bigint('failed_at'), bigint('error_code'), text('error_message'), text('error_reason'), bigint('updated_at'),
];
const LEDGER_COLUMNS: Column[] = [
  text('id'), text('workspace_id'), text('kind'), bigint('amount'), bigint('balance_after'), bigint('message_count'), text('reference'), text('note'), bigint('created_at'),
];
const DELIVERY_COLUMNS: Column[] = [
  text('id'), text('message_id'), text('workspace_id'), text('api_key_id'), text('url'), text('body'), text('status'), bigint('attempts'),
  bigint('attempts_at_redelivery'), bigint('next_attempt_at'), bigint('lease_expires_at'), bigint('last_status_code'), text('last_error'),
  bigint('delivered_at'), bigint('failed_at'), bigint('created_at'), bigint('updated_at'),
];
const IDEMPOTENCY_COLUMNS: Column[] = [
  text('workspace_id'), text('idempotency_key'), text('request_hash'), bigint('status_code'), text('response_body'), bigint('created_at'), bigint('expires_at'), text('result'),
];

/** The tables a history writes, with their columns; rows are written in this column order. */
const TABLES = {
  messages: MESSAGE_COLUMNS,
  message_states: MESSAGE_STATE_COLUMNS,
  wallet_ledger: LEDGER_COLUMNS,
  webhook_deliveries: DELIVERY_COLUMNS,
  idempotency_records: IDEMPOTENCY_COLUMNS,
} as const;
export type GrownTable = keyof typeof TABLES;

type Cell = string | number | null;

/**
 * Where grown rows go: the store's fastest bulk path. The secondary indexes of the big tables are
 * dropped while they grow and made again from their own definitions afterwards: building an index
 * from millions of rows at once is several times faster than keeping ten indexes up to date row by row.
 */
export interface BulkSink {
  /** Drops the secondary indexes of `table`; `restoreIndexes` makes them again. */
  dropIndexes(table: string): Promise<void>;
  restoreIndexes(): Promise<void>;
  insert(table: string, columns: Column[], rows: Cell[][]): Promise<void>;
  run(statement: string, parameters: Cell[]): Promise<void>;
  /** After growing: what a long-running database would have done by now. */
  finish(): Promise<void>;
  /** What `finish` does, for the report. */
  readonly finishing: string;
  close(): Promise<void>;
}

export function sqliteSink(file: string): BulkSink {
  const db: SqliteConnection = openSqliteDatabase(file);
  // Only while growing: a crash here loses a benchmark's scratch database, nothing else.
  db.pragma('synchronous = OFF');
  const statements = new Map<string, ReturnType<SqliteConnection['prepare']>>();
  let dropped: string[] = [];
  return {
    dropIndexes: async (table) => {
      const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(table) as { name: string; sql: string }[];
      for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
      dropped.push(...indexes.map((index) => index.sql));
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
    finishing: 'checkpoint',
    close: async () => {
      db.close();
    },
  };
}

/**
 * PostgreSQL: one INSERT … SELECT FROM json_populate_recordset per chunk. `finish` runs VACUUM
 * ANALYZE: a database that grew over months has had autovacuum visit it many times, so it has
 * statistics and a visibility map (an index-only scan needs one). Then a CHECKPOINT: such a
 * database is not writing gigabytes out either, while right after the load PostgreSQL's
 * checkpoints went on for minutes behind it, into the reads and the dispatch runs measured next.
 */
export async function postgresSink(url: string): Promise<BulkSink> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET synchronous_commit = off');
  await client.query("SET maintenance_work_mem = '512MB'");
  let dropped: string[] = [];
  return {
    dropIndexes: async (table) => {
      const indexes = await client.query<{ indexname: string; indexdef: string }>(
        'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname NOT IN (SELECT conname FROM pg_constraint)',
        [table],
      );
      for (const index of indexes.rows) await client.query(`DROP INDEX ${index.indexname}`);
      dropped.push(...indexes.rows.map((index) => index.indexdef));
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
      await client.query('CHECKPOINT');
    },
    finishing: 'vacuum, analyse and checkpoint',
    close: async () => {
      await client.end();
    },
  };
}

export interface SeededTemplate {
  templateId: string;
  oaId: string;
  price: number;
  /** Share of the workspace's messages sent with it. */
  share: number;
  data: (random: () => number) => string;
}

export interface SeededWorkspace {
  workspaceId: string;
  apiKeyId: string;
  apiKey: string;
  templates: SeededTemplate[];
  phonePrefix: string;
}

const FAILURES = [
  { code: -118, message: 'Zalo account not existed', reason: 'Tài khoản Zalo không tồn tại hoặc đã bị vô hiệu hoá' },
  { code: -108, message: 'Phone number invalid', reason: 'Số điện thoại không hợp lệ' },
  { code: -124, message: 'Message exceeds the quota of this phone', reason: 'Số điện thoại đã nhận quá số tin cho phép' },
  { code: -139, message: 'User refused to receive ZNS', reason: 'Người dùng đã từ chối nhận tin ZNS' },
];

const NAMES = ['Nguyễn Văn An', 'Trần Thị Bình', 'Lê Hoàng Cường', 'Phạm Minh Dũng', 'Võ Thị Hạnh', 'Đặng Quốc Huy'];

const TEMPLATE_SHAPES = [
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
] as const;

/**
 * One workspace through the operator's services: `oaCount` sender accounts, `templateCount`
 * templates (the first two on the first account, the third on the second) and an API key with a
 * webhook URL. `stamp` keeps OA ids unique between runs; `index` between workspaces of a run.
 */
export async function seedBenchWorkspace(
  runtime: Runtime,
  input: { name: string; stamp: string; index: number; templateCount: number; oaCount: number; dailyQuota?: number },
): Promise<SeededWorkspace> {
  const ctx = runtime.contextFor({ kind: 'operator' });
  const { stamp, index } = input;
  const workspace = await createWorkspace({ ctx, input: { name: input.name } });
  const oaIds: string[] = [];
  for (let oa = 0; oa < input.oaCount; oa += 1) {
    const oaId = `43182697${stamp}${index}${oa}`;
    await connectSenderAccount({
      ctx,
      input: { workspaceId: workspace.id, oa_id: oaId, name: `Shop ${index}.${oa}`, daily_quota: input.dailyQuota ?? 500_000, app_id: `app${stamp}${index}${oa}`, app_secret: 'app-secret', refresh_token: 'refresh-token', verify: false },
    });
    oaIds.push(oaId);
  }
  const shapes = TEMPLATE_SHAPES.slice(0, input.templateCount);
  const shareSum = shapes.reduce((sum, shape) => sum + shape.share, 0);
  const templates: SeededTemplate[] = [];
  for (const [position, shape] of shapes.entries()) {
    const templateId = `${stamp}${index}${position}`;
    const oaId = oaIds[Math.min(oaIds.length - 1, position >= 2 ? 1 : 0)]!;
    await registerTemplate({
      ctx,
      input: { workspaceId: workspace.id, template_id: templateId, name: shape.name, status: 'ENABLE', template_type: 1, oa_id: oaId, preview_url: 'https://example.com/preview', params: [...shape.params], price: shape.price, verify: false },
    });
    templates.push({ templateId, oaId, price: shape.price, share: shape.share / shareSum, data: shape.data });
  }
  const key = await createApiKey({ ctx, input: { workspaceId: workspace.id, name: 'shop backend', scopes: ['messages:send', 'messages:read', 'templates:read'], webhook_url: WEBHOOK_URL } });
  return { workspaceId: workspace.id, apiKeyId: key.row.id, apiKey: key.secret, templates, phonePrefix: ['98', '91', '90', '70'][index % 4]! };
}

/** How a history looks beyond its messages. */
export interface HistoryOptions {
  /**
   * true: the 2% of messages queued in the last two days are due now, a backlog the workers have
   * not reached; false: every queued message is scheduled for the coming days, as in a gateway
   * whose workers keep up (a worker started on the store then has nothing of the history to send).
   */
  backlog: boolean;
  /** Every how many delivered messages has a delivery report in the outbox (1: each, failed ones too). */
  reportEvery: number;
  /** Reports only of messages finished within this many days (older finished ones are purged), or null for all. */
  reportWithinDays: number | null;
  /** Share of the last 24 hours' messages accepted with an Idempotency-Key (their records live 24 hours). */
  idempotencyShare: number;
}

export const CONSOLE_HISTORY: HistoryOptions = { backlog: true, reportEvery: 10, reportWithinDays: null, idempotencyShare: 0 };

/** One workspace to grow: how many messages, and which seed its random draws start from. */
export interface HistoryPlan {
  workspace: SeededWorkspace;
  messages: number;
  seed: number;
}

/** What the grown store holds: rows per table, and values the reads then ask for. */
export interface Grown {
  rows: Record<GrownTable, number>;
  /** Seconds spent writing the rows, and making the dropped indexes again. */
  rowsSeconds: number;
  indexSeconds: number;
  /** Per workspace id: tracking ids, phones and message ids of its messages, spread over its history. */
  samples: Map<string, { trackingIds: string[]; phones: string[]; messageIds: string[] }>;
}

const SAMPLES_PER_KIND = 50;
const SAMPLE_MESSAGE_IDS = 1000;

/** One row of a history, in creation order. */
interface HistoryRow {
  table: GrownTable;
  cells: Cell[];
}

const STATUS_CODES = ['delivered', 'failed', 'sent', 'queued', 'scheduled'] as const;

/**
 * One workspace's history as rows in creation order (each message, then what it caused: a ledger
 * charge, a report, an event, an idempotency record), then its balance and today's quota use.
 */
function* workspaceHistory(plan: HistoryPlan, now: number, options: HistoryOptions, grown: Grown): Generator<{ at: number; rows: HistoryRow[] }, { balance: number; quotaToday: Map<string, number> }> {
  const { workspace, messages: count } = plan;
  const random = seededRandom(plan.seed);
  const start = now - HISTORY_DAYS * DAY_MS;
  // Creation time and status packed in one number, so one typed-array sort orders both.
  const packed = new Float64Array(count);
  for (let index = 0; index < count; index += 1) {
    const draw = random();
    let status = draw < 0.85 ? 0 : draw < 0.93 ? 1 : draw < 0.97 ? 2 : draw < 0.99 ? 3 : 4;
    if (status === 3 && !options.backlog) status = 4;
    const createdAt = status >= 3 ? now - Math.floor(random() * 2 * DAY_MS) : start + Math.floor(random() * (HISTORY_DAYS * DAY_MS - 60_000));
    packed[index] = createdAt * 8 + status;
  }
  packed.sort();

  const today = vietnamDayOf(now);
  const reportsFrom = options.reportWithinDays === null ? Number.NEGATIVE_INFINITY : now - options.reportWithinDays * DAY_MS;
  const idempotentFrom = now - IDEMPOTENCY_LIFETIME_MS;
  const quotaToday = new Map<string, number>();
  let balance = 0;
  let nextTopUp = start;
  let pendingCharge: { id: string; amount: number; count: number; createdAt: number } | null = null;
  const samples = { trackingIds: [] as string[], phones: [] as string[], messageIds: [] as string[] };
  grown.samples.set(workspace.workspaceId, samples);
  const sampleEvery = Math.max(1, Math.floor(count / SAMPLES_PER_KIND));
  const idSampleEvery = Math.max(1, Math.floor(count / SAMPLE_MESSAGE_IDS));
  let rows: HistoryRow[] = [];
  const closeCharge = () => {
    if (!pendingCharge) return;
    balance -= pendingCharge.amount;
    rows.push({ table: 'wallet_ledger', cells: [sortableId('led', pendingCharge.createdAt, random), workspace.workspaceId, 'charge', -pendingCharge.amount, balance, pendingCharge.count, pendingCharge.id, null, pendingCharge.createdAt] });
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
      rows.push({ table: 'wallet_ledger', cells: [sortableId('led', nextTopUp, random), workspace.workspaceId, 'top_up', amount, balance, 0, null, 'chuyển khoản', nextTopUp] });
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
      samples.trackingIds.push(trackingId);
      samples.phones.push(phone);
    }
    if (index % idSampleEvery === idSampleEvery >> 1) samples.messageIds.push(id);
    const handedOver = status === 'delivered' || status === 'sent' || status === 'failed';
    const sentAt = handedOver ? createdAt + 200 + Math.floor(random() * 3000) : null;
    const failure = status === 'failed' ? FAILURES[Math.floor(random() * FAILURES.length)]! : null;
    // Half the failures are refused by the platform at once (never sent); the others fail after sending.
    const refused = failure !== null && random() < 0.5;
    const deliveredAt = status === 'delivered' ? sentAt! + 1000 + Math.floor(random() * 20_000) : null;
    const failedAt = failure ? (refused ? createdAt + 400 : sentAt! + 2000) : null;
    // Without a backlog nothing of the history is due: every scheduled message waits for a time still to come.
    const scheduledAt = status === 'scheduled' ? (options.backlog ? createdAt : now + 60_000) + DAY_MS + Math.floor(random() * 6 * DAY_MS) : null;
    const quotaDay = handedOver && !refused ? vietnamDayOf(sentAt!) : null;
    if (quotaDay === today) quotaToday.set(template.oaId, (quotaToday.get(template.oaId) ?? 0) + 1);
    const providerMsgId = quotaDay === null ? null : `${(createdAt % 1e9).toString(16)}${Math.floor(random() * 1e9).toString(16)}`;
    rows.push({
      table: 'messages',
      cells: [
        id,
        workspace.workspaceId,
        workspace.apiKeyId,
        trackingId,
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
        scheduledAt,
        createdAt,
      ],
    });
    rows.push({
      table: 'message_states',
      cells: [
        id,
        workspace.workspaceId,
        template.oaId,
        quotaDay,
        createdAt,
        status === 'scheduled' ? 'queued' : status,
        scheduledAt ?? createdAt,
        handedOver ? 1 : 0,
        null,
        null,
        providerMsgId,
        refused ? null : sentAt,
        null,
        deliveredAt,
        failedAt,
        failure?.code ?? null,
        failure?.message ?? null,
        failure?.reason ?? null,
        deliveredAt ?? failedAt ?? sentAt ?? createdAt,
      ],
    });
    const finishedAt = deliveredAt ?? failedAt;
    const reported = options.reportEvery === 1 ? finishedAt !== null : status === 'delivered' && index % options.reportEvery === 0;
    if (reported && finishedAt! >= reportsFrom) {
      const outcome = deliveredAt === null ? 'failed' : 'delivered';
      const body = JSON.stringify({ message_id: id, tracking_id: trackingId, status: outcome, phone, [`${outcome}_at`]: new Date(finishedAt!).toISOString() });
      rows.push({
        table: 'webhook_deliveries',
        cells: [sortableId(DELIVERY_ID_PREFIX, finishedAt!, random), id, workspace.workspaceId, workspace.apiKeyId, WEBHOOK_URL, body, 'delivered', 1, 0, finishedAt!, null, 200, null, finishedAt! + 80, null, finishedAt!, finishedAt! + 80],
      });
    }
    if (createdAt > idempotentFrom && options.idempotencyShare > 0 && random() < options.idempotencyShare) {
      const result = JSON.stringify({ kind: 'single', msg_id: id, status: 'queued' });
      const hash = `${Math.floor(random() * 2 ** 52).toString(16).padStart(13, '0')}${id.slice(-16)}`;
      rows.push({ table: 'idempotency_records', cells: [workspace.workspaceId, `order-${trackingId}`, hash, null, null, createdAt, createdAt + IDEMPOTENCY_LIFETIME_MS, result] });
    }
    if (!pendingCharge) pendingCharge = { id, amount: 0, count: 0, createdAt };
    pendingCharge.amount += template.price;
    pendingCharge.count += 1;
    if (pendingCharge.count === MESSAGES_PER_CHARGE) closeCharge();
    yield { at: createdAt, rows };
    rows = [];
  }
  closeCharge();
  if (rows.length > 0) yield { at: now, rows };
  return { balance, quotaToday };
}

/**
 * Grows the store: every plan's history, in creation order across workspaces when `interleave`
 * (as a live gateway writes them, so one workspace's rows share pages with the others'), else one
 * workspace after the other. The secondary indexes of the big tables are dropped first and made
 * again at the end; `sink.finish()` is left to the caller.
 */
export async function growStore(sink: BulkSink, plans: HistoryPlan[], now: number, options: HistoryOptions & { interleave: boolean }): Promise<Grown> {
  const started = performance.now();
  const grown: Grown = { rows: { messages: 0, message_states: 0, wallet_ledger: 0, webhook_deliveries: 0, idempotency_records: 0 }, rowsSeconds: 0, indexSeconds: 0, samples: new Map() };
  const buffers = new Map<GrownTable, Cell[][]>(Object.keys(TABLES).map((table) => [table as GrownTable, []]));
  const flush = async (table: GrownTable, force: boolean) => {
    const rows = buffers.get(table)!;
    if (rows.length >= CHUNK_ROWS || (force && rows.length > 0)) {
      await sink.insert(table, TABLES[table], rows);
      grown.rows[table] += rows.length;
      buffers.set(table, []);
    }
  };
  const take = async (rows: HistoryRow[]) => {
    for (const row of rows) {
      buffers.get(row.table)!.push(row.cells);
      if (buffers.get(row.table)!.length >= CHUNK_ROWS) await flush(row.table, false);
    }
  };
  const finishWorkspace = async (plan: HistoryPlan, end: { balance: number; quotaToday: Map<string, number> }) => {
    await sink.run('UPDATE workspaces SET balance = ?, messages_accepted = ? WHERE id = ?', [end.balance, plan.messages, plan.workspace.workspaceId]);
    for (const [oaId, used] of end.quotaToday) await sink.run('INSERT INTO quota_reservations (oa_id, day, reserved) VALUES (?, ?, ?)', [oaId, vietnamDayOf(now), used]);
  };

  for (const table of ['messages', 'message_states', 'webhook_deliveries'] as const) await sink.dropIndexes(table);
  if (options.interleave) {
    // A k-way merge by creation time: a linear scan of the heads is cheap for a few dozen workspaces.
    const heads = plans.map((plan) => {
      const history = workspaceHistory(plan, now, options, grown);
      return { plan, history, next: history.next() };
    });
    for (;;) {
      let earliest: (typeof heads)[number] | null = null;
      for (const head of heads) if (!head.next.done && (earliest === null || head.next.value.at < (earliest.next.value as { at: number }).at)) earliest = head;
      if (earliest === null) break;
      await take((earliest.next.value as { rows: HistoryRow[] }).rows);
      earliest.next = earliest.history.next();
      if (earliest.next.done) await finishWorkspace(earliest.plan, earliest.next.value);
    }
  } else {
    for (const plan of plans) {
      const history = workspaceHistory(plan, now, options, grown);
      let step = history.next();
      for (; !step.done; step = history.next()) await take(step.value.rows);
      await finishWorkspace(plan, step.value);
    }
  }
  for (const table of Object.keys(TABLES) as GrownTable[]) await flush(table, true);
  const rowsWritten = performance.now();
  grown.rowsSeconds = (rowsWritten - started) / 1000;
  await sink.restoreIndexes();
  grown.indexSeconds = (performance.now() - rowsWritten) / 1000;
  return grown;
}
