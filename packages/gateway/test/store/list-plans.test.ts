/**
 * The message list's query plans: every filter of GET /api/v1/messages (and the console's list,
 * which runs the same query), the lookup by id, delivery events' lookup of the messages they name
 * and a delivery event's lookup by the platform's msg_id must reach their rows through an index that
 * the filter narrows, never by reading the whole table or the whole workspace. On a store of a
 * million messages in one workspace, a filter that an index does not serve reads them all
 * (half a second and more); the same filter through its index reads one page.
 *
 * The statements are the store's own (listMessagesQuery, findMessageQuery), compiled for each
 * store and explained with their parameters: SQLite's EXPLAIN QUERY PLAN (the list names its index
 * with INDEXED BY, as the gateway keeps no statistics), PostgreSQL's EXPLAIN on a table of a few
 * thousand messages with no statistics (its default selectivities, as for a table that grew since
 * its last ANALYZE) and sequential scans priced out (`enable_seqscan = off`, for this transaction
 * only; for the reads that must come in index order, sorts too), so the plan shows whether an
 * index can serve the filter and the order rather than what is cheapest for a small table.
 */
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import { findMessageQuery, listMessagesQuery, type MessageFilter, type MessagePageWindow } from '../../src/store/messages.ts';
import { eventMessagesByIdQuery, sentMessagesByProviderIdQuery } from '../../src/store/platform-events.ts';
import type { Database, MessageRow, MessageStatus } from '../../src/store/schema.ts';
import { insertMessages } from '../message-rows.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

/** One read of the list (or by id) and the columns its index must be searched by. */
interface PlannedRead {
  name: string;
  compile(db: Kysely<Database>, dialect: Store['dialect']): CompiledQuery;
  /** Columns that must appear in the condition of the index search on messages. */
  searchedBy: string[];
  /** What it reads must not be sorted whole: the index gives the order (unfiltered pages, deep offsets, and the filters whose index holds the time). */
  ordered: boolean;
}

const WORKSPACE = 'ws_plans';
const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 10, 24, 5, 0, 0);
const PAGE: MessagePageWindow = { limit: 50, offset: 0 };
const MESSAGES_PER_WORKSPACE = 3000;
const STATUSES: MessageStatus[] = ['delivered', 'delivered', 'delivered', 'failed', 'sent', 'queued'];

/** Messages of the workspace read and of a neighbour, spread over 90 days, many phones, templates and sender accounts. */
async function fillMessages(db: Kysely<Database>): Promise<void> {
  for (const workspaceId of [WORKSPACE, 'ws_neighbour']) {
    const rows: MessageRow[] = Array.from({ length: MESSAGES_PER_WORKSPACE }, (_, index) => {
      const createdAt = NOW - 90 * DAY_MS + Math.floor((index * 90 * DAY_MS) / MESSAGES_PER_WORKSPACE);
      const status = STATUSES[index % STATUSES.length]!;
      return {
        id: `msg_${workspaceId}_${String(index).padStart(6, '0')}`,
        workspace_id: workspaceId,
        api_key_id: 'key_plans',
        tracking_id: `order-${index}`,
        status,
        mode: 'plain',
        phone: `849${String(1_000_000 + ((index * 7919) % 1000)).padStart(8, '0')}`,
        carrier: 'viettel',
        rsa_phone: null,
        source: 'api',
        template_id: String(250_000 + (index % 40)),
        oa_id: `43182697${index % 8}`,
        template_data: '{}',
        price: 300,
        quota_day: null,
        provider_msg_id: status === 'queued' ? null : `p${workspaceId}${index}`,
        error_code: null,
        error_message: null,
        error_reason: null,
        due_at: createdAt,
        scheduled_at: null,
        attempts: 1,
        lease_expires_at: null,
        unconfirmed_since: null,
        sent_at: status === 'queued' ? null : createdAt + 500,
        status_checked_at: null,
        delivered_at: status === 'delivered' ? createdAt + 5000 : null,
        failed_at: status === 'failed' ? createdAt + 800 : null,
        created_at: createdAt,
        updated_at: createdAt,
      };
    });
    await insertMessages(db, rows);
  }
}

const list = (name: string, filter: MessageFilter, searchedBy: string[], options: { page?: MessagePageWindow; ordered?: boolean } = {}): PlannedRead => ({
  name,
  compile: (db, dialect) => listMessagesQuery(dialect, WORKSPACE, filter, options.page ?? PAGE).compile(db),
  searchedBy: ['workspace_id', ...searchedBy],
  ordered: options.ordered ?? false,
});

/** Every filter docs/api.md lists for GET /api/v1/messages, alone, and the combinations the bench reads. */
const READS: PlannedRead[] = [
  list('newest page', {}, [], { ordered: true }),
  list('offset 10,000', {}, [], { page: { limit: 50, offset: 10_000 }, ordered: true }),
  list('status', { status: 'failed' }, ['status']),
  list('tracking_id', { trackingId: 'order-DH-240115' }, ['tracking_id']),
  list('phone', { phone: '84912345678' }, ['phone'], { ordered: true }),
  list('template_id', { templateId: '250001' }, ['template_id'], { ordered: true }),
  list('oa_id', { oaId: '4318269720189301001' }, ['oa_id'], { ordered: true }),
  list('from', { from: NOW - 7 * DAY_MS }, ['created_at'], { ordered: true }),
  list('to', { to: NOW - 60 * DAY_MS }, ['created_at'], { ordered: true }),
  list('from and to', { from: NOW - 31 * DAY_MS, to: NOW - 30 * DAY_MS }, ['created_at'], { ordered: true }),
  list('status and from', { status: 'failed', from: NOW - 30 * DAY_MS }, ['status', 'created_at']),
  {
    name: 'by id',
    compile: (db) => findMessageQuery(db, WORKSPACE, 'msg_01M86FCFDNFFDKPKA8FTQSG57M').compile(),
    searchedBy: ['id'],
    ordered: false,
  },
  {
    // The messages a group of delivery events names by our msg_id, all at once.
    name: 'messages by the ids delivery events name',
    compile: (db, dialect) => eventMessagesByIdQuery(dialect, [`msg_${WORKSPACE}_000005`, `msg_${WORKSPACE}_000006`]).compile(db),
    searchedBy: ['id'],
    ordered: false,
  },
  {
    // A delivery event that does not name our msg_id, once per such event.
    name: 'a sent message by the platform msg_id',
    compile: (db) => sentMessagesByProviderIdQuery(db, `p${WORKSPACE}5`).compile(),
    searchedBy: ['provider_msg_id'],
    ordered: false,
  },
];

/** How one statement reads a message's two tables: each search with its condition, and whether it sorts all it read. */
interface PlanReading {
  /** Index searches on messages and message_states: the index and the columns its condition names. */
  searches: { index: string; columns: string[] }[];
  /** Reads of either table that no index condition narrows (full scans of the table or of an index). */
  fullScans: string[];
  /** A sort of everything read (not just of rows sharing created_at). */
  sortsAll: boolean;
  /** The plan as the database printed it, for the failure message. */
  text: string;
}

const MESSAGE_TABLES = '(?:messages|message_states|m|s)';
const COLUMNS = ['workspace_id', 'id', 'status', 'tracking_id', 'phone', 'template_id', 'oa_id', 'created_at', 'provider_msg_id'];
const columnsIn = (condition: string) => COLUMNS.filter((column) => new RegExp(`\\b${column}\\b`).test(condition));

/**
 * The columns a SQLite index search's condition names. SQLite prints a term on an expression of the
 * index as `<expr>=?`; the terms follow the index's keys in order, so the n-th term is read from the
 * n-th key of the index's definition (`substr(phone, -2)` names phone).
 */
async function searchedColumnsSqlite(db: Kysely<Database>, index: string, condition: string): Promise<string[]> {
  const terms = condition.split(' AND ');
  if (!terms.some((term) => term.startsWith('<expr>'))) return columnsIn(condition);
  const definition = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ${index}`.execute(db);
  const keyList = /\((.*)\)$/.exec(definition.rows[0]!.sql)![1]!;
  const keys = keyList.split(/,\s*(?![^(]*\))/);
  return columnsIn(terms.map((term, position) => (term.startsWith('<expr>') ? keys[position]! : term)).join(' AND '));
}

async function explainSqlite(db: Kysely<Database>, query: CompiledQuery): Promise<PlanReading> {
  const result = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]));
  const details = result.rows.map((row) => row.detail);
  const reading: PlanReading = { searches: [], fullScans: [], sortsAll: false, text: details.join('\n') };
  for (const detail of details) {
    // SEARCH s USING INDEX message_states_by_workspace_status (workspace_id=? AND status=?), the
    // table named by its alias in the statement (m: messages, s: message_states) or by its name.
    const search = new RegExp(`^SEARCH ${MESSAGE_TABLES} USING (?:COVERING )?INDEX (\\S+) \\((.*)\\)$`).exec(detail);
    if (search) reading.searches.push({ index: search[1]!, columns: await searchedColumnsSqlite(db, search[1]!, search[2]!) });
    else if (new RegExp(`^SEARCH ${MESSAGE_TABLES} USING INTEGER PRIMARY KEY`).test(detail)) reading.searches.push({ index: 'rowid', columns: [] });
    else if (new RegExp(`^SCAN ${MESSAGE_TABLES}\\b`).test(detail)) reading.fullScans.push(detail);
    if (detail === 'USE TEMP B-TREE FOR ORDER BY') reading.sortsAll = true;
  }
  return reading;
}

interface PostgresPlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PostgresPlanNode[];
}

async function explainPostgres(db: Kysely<Database>, query: CompiledQuery): Promise<PlanReading> {
  const result = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PostgresPlanNode }] }>(CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${query.sql}`, [...query.parameters]));
  const root = result.rows[0]!['QUERY PLAN'][0].Plan;
  const reading: PlanReading = { searches: [], fullScans: [], sortsAll: false, text: JSON.stringify(root, null, 1) };
  const messagesIndexes = new Set<string>();
  const indexes = await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE tablename IN ('messages', 'message_states')`.execute(db);
  for (const row of indexes.rows) messagesIndexes.add(row.indexname);
  const visit = (node: PostgresPlanNode) => {
    const type = node['Node Type'];
    const relation = node['Relation Name'];
    const onMessages = relation === 'messages' || relation === 'message_states' || (node['Index Name'] !== undefined && messagesIndexes.has(node['Index Name']));
    if (onMessages && type === 'Seq Scan') reading.fullScans.push(`Seq Scan on ${relation}`);
    if (onMessages && (type === 'Index Scan' || type === 'Index Only Scan' || type === 'Bitmap Index Scan')) {
      const condition = node['Index Cond'];
      if (condition === undefined) reading.fullScans.push(`${type} using ${node['Index Name']} without a condition`);
      else reading.searches.push({ index: node['Index Name']!, columns: columnsIn(condition) });
    }
    if (type === 'Sort') reading.sortsAll = true;
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(root);
  return reading;
}

/** Explains `read` in a transaction that is rolled back, after `prepare` (a change to try the checker on). */
async function explain(store: Store, read: PlannedRead, prepare?: (db: Kysely<Database>) => Promise<void>): Promise<PlanReading> {
  const query = read.compile(store.db, store.dialect);
  return store.db.connection().execute(async (db) => {
    await sql`BEGIN`.execute(db);
    try {
      if (store.dialect === 'postgres') {
        await sql`SET LOCAL enable_seqscan = off`.execute(db);
        // Where a small table makes sorting a few rows cheapest, ask whether an index can give the order.
        if (read.ordered) await sql`SET LOCAL enable_sort = off`.execute(db);
      }
      await prepare?.(db);
      return store.dialect === 'sqlite' ? await explainSqlite(db, query) : await explainPostgres(db, query);
    } finally {
      await sql`ROLLBACK`.execute(db);
    }
  });
}

/** What is wrong with how a read reaches its rows; empty when an index serves it. */
function planProblems(read: PlannedRead, reading: PlanReading): string[] {
  const problems: string[] = [];
  for (const scan of reading.fullScans) problems.push(`reads a message table without an index condition: ${scan}`);
  const served = reading.searches.some((search) => read.searchedBy.every((column) => search.columns.includes(column)));
  if (!served) problems.push(`no index search on a message table by ${read.searchedBy.join(', ')} (searches: ${JSON.stringify(reading.searches)})`);
  if (read.ordered && reading.sortsAll) problems.push('sorts every row it reads instead of reading them in order from the index');
  return problems;
}

async function problemsOf(store: Store, read: PlannedRead, prepare?: (db: Kysely<Database>) => Promise<void>): Promise<string[]> {
  try {
    return planProblems(read, await explain(store, read, prepare));
  } catch (error) {
    // SQLite refuses a statement whose INDEXED BY names an index that is gone: the read fails outright.
    return [`cannot be planned: ${error instanceof Error ? error.message : String(error)}`];
  }
}

describe.each(STORE_KINDS)('message list query plans (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = openStore(parseConfig(gatewayEnvironment(database)).database);
    await migrate(store);
    await fillMessages(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it.each(READS.map((read) => [read.name, read] as const))('%s reaches its rows through an index', async (_name, read) => {
    const reading = await explain(store, read);
    expect(planProblems(read, reading), reading.text).toEqual([]);
  });

  it('reports a filter whose index is gone, and an unfiltered page that has to sort the workspace', async () => {
    const status = READS.find((read) => read.name === 'status')!;
    const newest = READS.find((read) => read.name === 'newest page')!;
    const withoutIndex = (index: string) => async (db: Kysely<Database>) => {
      await sql`DROP INDEX ${sql.id(index)}`.execute(db);
    };
    const statusProblems = await problemsOf(store, status, withoutIndex('message_states_by_workspace_status'));
    expect(statusProblems.length).toBeGreaterThan(0);
    expect(statusProblems.join('\n')).toMatch(kind === 'sqlite' ? /no such index: message_states_by_workspace_status/ : /no index search on a message table by workspace_id, status/);
    const newestProblems = await problemsOf(store, newest, withoutIndex('messages_by_workspace_time'));
    expect(newestProblems).toContain('sorts every row it reads instead of reading them in order from the index');
    // The index is back after the rolled-back transaction.
    expect(await problemsOf(store, status)).toEqual([]);
  });
});
