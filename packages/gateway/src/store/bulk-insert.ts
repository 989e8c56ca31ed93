import { CompiledQuery } from 'kysely';
import type { Dialect, Transaction } from './database.ts';

/**
 * SQLite rows per statement, largest first: powers of two, so any count takes few statements
 * (24 rows: 16 + 8) and the prepared-statement cache holds few shapes (a statement of hundreds of
 * rows holds megabytes).
 */
const CHUNK_SIZES = [256, 128, 64, 32, 16, 8, 4, 2, 1];

function chunkSizeFor(remaining: number): number {
  return CHUNK_SIZES.find((size) => size <= remaining) ?? 1;
}

/**
 * Rows that may already be there: `ON CONFLICT (column) DO NOTHING`, returning `returning` of the
 * rows inserted now.
 */
export interface ConflictRule {
  column: string;
  returning: string;
}

/**
 * Inserts many rows with few statements. The SQL text is built directly because building a query
 * tree of hundreds of rows × 28 columns costs more than running it. Table and column names come
 * from our own code, never from input. `columns` picks the columns a table takes from wider rows
 * (a message's row and its state are inserted from the same objects). With a conflict rule,
 * returns the rows it inserted (their `returning` column); without one, nothing.
 */
export async function insertRows<Row extends object>(
  trx: Transaction,
  dialect: Dialect,
  table: string,
  rows: readonly Row[],
  options: { conflict?: ConflictRule; columns?: readonly (keyof Row)[] } = {},
): Promise<Record<string, unknown>[]> {
  const first = rows[0];
  if (!first) return [];
  const { conflict } = options;
  // Columns that are null in every row are left to their default (NULL): fewer values to bind.
  const columns = (options.columns ?? (Object.keys(first) as (keyof Row)[])).filter((column) => rows.some((row) => row[column] !== null && row[column] !== undefined));
  const suffix = conflict ? ` ON CONFLICT (${conflict.column}) DO NOTHING RETURNING ${conflict.returning}` : '';
  if (dialect === 'postgres') return insertWithArrays(trx, table, columns, rows, suffix);
  const columnList = columns.join(',');
  const tuple = `(${columns.map(() => '?').join(',')})`;
  const inserted: Record<string, unknown>[] = [];
  for (let start = 0; start < rows.length; ) {
    const chunk = rows.slice(start, start + chunkSizeFor(rows.length - start));
    start += chunk.length;
    const parameters: unknown[] = [];
    for (const row of chunk) for (const column of columns) parameters.push(row[column] ?? null);
    // OR FAIL, not SQLite's default ABORT: to undo a failed statement alone, ABORT keeps a
    // statement journal, a copy of every page the statement is first to touch (hundreds for a
    // batch's rows). Every caller runs in a transaction that rolls back whole on any error
    // (runInTransaction), so rows a failed statement leaves behind never commit.
    const text = `INSERT OR FAIL INTO ${table} (${columnList}) VALUES ${Array<string>(chunk.length).fill(tuple).join(',')}${suffix}`;
    const result = await trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, parameters));
    for (const row of result.rows) inserted.push(row);
  }
  return inserted;
}

/**
 * PostgreSQL: one statement for any number of rows, one array parameter per column
 * (INSERT … SELECT * FROM unnest(…)), measured about 60% faster than multi-row VALUES. Our rows
 * hold only text and whole numbers, so each column's type follows from its first non-null value.
 */
async function insertWithArrays<Row extends object>(
  trx: Transaction,
  table: string,
  columns: (keyof Row)[],
  rows: readonly Row[],
  suffix: string,
): Promise<Record<string, unknown>[]> {
  const arrays = columns.map((column) => rows.map((row) => row[column] ?? null));
  const types = arrays.map((values) => (typeof values.find((value) => value !== null) === 'number' ? 'bigint' : 'text'));
  const text = `INSERT INTO ${table} (${columns.join(',')}) SELECT * FROM unnest(${types.map((type, index) => `$${index + 1}::${type}[]`).join(',')})${suffix}`;
  const result = await trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, arrays));
  return result.rows;
}
