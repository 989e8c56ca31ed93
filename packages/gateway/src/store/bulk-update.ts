/**
 * Updates many rows, each with its own values, in one statement per chunk: the rows travel as one
 * JSON array parameter and are joined to the table by id (UPDATE … FROM), so the statement text is
 * the same whatever the number of rows (one prepared statement on SQLite, one plan on PostgreSQL)
 * and only a handful of parameters are bound.
 *
 * PostgreSQL: UPDATE t SET … FROM json_to_recordset($1::json) AS x(id text, …) WHERE t.id = x.id
 * SQLite (3.33+ for UPDATE FROM, 3.38+ for ->>): … FROM (SELECT value->>'id' AS id, … FROM json_each(?)) AS x
 *
 * Table, column and value names come from our own code, never from input.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Dialect, Transaction } from './database.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';

export type BulkValueType = 'text' | 'bigint' | 'integer';

/** One row's values: its id and what the statement reads as x.<name>. */
export type BulkRow = { readonly id: string } & { readonly [name: string]: string | number | null };

/** The SQL type of each value but id. Name them unlike the table's columns: PostgreSQL rejects an ambiguous name. */
export type BulkTypes<Values> = { readonly [Name in keyof Values]: BulkValueType };

export interface BulkUpdate {
  table: 'messages' | 'message_states' | 'webhook_deliveries';
  types: BulkTypes<Record<string, unknown>>;
  rows: readonly BulkRow[];
  /** The SET list; x.<name> is the row's own value. */
  set: RawBuilder<unknown>;
  /** Conditions the row must meet besides its id (columns qualified by the table's name). */
  where?: RawBuilder<unknown>;
  /** Columns of the updated rows to return. */
  returning?: readonly string[];
}

/** Rows per statement: keeps each JSON parameter to a few hundred kilobytes. */
const ROWS_PER_STATEMENT = 1000;

function rowsSource(dialect: Dialect, types: BulkUpdate['types'], json: string): RawBuilder<unknown> {
  const names = Object.keys(types);
  if (dialect === 'postgres') {
    const columns = ['id text', ...names.map((name) => `${name} ${types[name]}`)].join(', ');
    return sql`json_to_recordset(${json}::json) AS x(${sql.raw(columns)})`;
  }
  const fields = ['id', ...names].map((name) => `value->>'${name}' AS ${name}`).join(', ');
  return sql`(SELECT ${sql.raw(fields)} FROM json_each(${json})) AS x`;
}

/** Applies `set` to every row of `rows` that still meets `where`; returns what `returning` names of those updated. */
export async function updateRows<Returned = unknown>(trx: Transaction, dialect: Dialect, update: BulkUpdate): Promise<Returned[]> {
  const { table } = update;
  const where = update.where ? sql`AND ${update.where}` : sql``;
  const returning = update.returning?.length ? sql.raw(`RETURNING ${update.returning.map((column) => `${table}.${column} AS ${column}`).join(', ')}`) : sql``;
  const returned: Returned[] = [];
  for (let start = 0; start < update.rows.length; start += ROWS_PER_STATEMENT) {
    const json = JSON.stringify(update.rows.slice(start, start + ROWS_PER_STATEMENT));
    // Planned per run: joining a batch to a table by id is best done through the table's index once
    // the table holds more than a few pages, which a plan made while it was small does not know.
    const result = await sql<Returned>`
      ${PLANNED_PER_RUN} UPDATE ${sql.raw(table)} SET ${update.set}
      FROM ${rowsSource(dialect, update.types, json)}
      WHERE ${sql.raw(table)}.id = x.id ${where}
      ${returning}`.execute(trx);
    returned.push(...result.rows);
  }
  return returned;
}
