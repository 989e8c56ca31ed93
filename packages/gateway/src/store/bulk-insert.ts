import { CompiledQuery } from 'kysely';
import type { Dialect, Transaction } from './database.ts';

/**
 * Rows per statement, largest first: powers of two, so any count takes few statements (24 rows:
 * 16 + 8; a round trip each on PostgreSQL) and the prepared-statement cache holds few shapes (a
 * statement of hundreds of rows holds megabytes).
 */
const CHUNK_SIZES = [256, 128, 64, 32, 16, 8, 4, 2, 1];

function chunkSizeFor(remaining: number): number {
  return CHUNK_SIZES.find((size) => size <= remaining) ?? 1;
}

/**
 * Inserts many rows with few statements. The SQL text is built directly because building a query
 * tree of hundreds of rows × 28 columns costs more than running it. Table and column names come
 * from our own code, never from input.
 */
export async function insertRows<Row extends object>(trx: Transaction, dialect: Dialect, table: string, rows: Row[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  // Columns that are null in every row are left to their default (NULL): fewer values to bind.
  const columns = (Object.keys(first) as (keyof Row)[]).filter((column) => rows.some((row) => row[column] !== null && row[column] !== undefined));
  const columnList = columns.join(',');
  const sqliteTuple = `(${columns.map(() => '?').join(',')})`;
  for (let start = 0; start < rows.length; ) {
    const chunk = rows.slice(start, start + chunkSizeFor(rows.length - start));
    start += chunk.length;
    const parameters: unknown[] = [];
    for (const row of chunk) for (const column of columns) parameters.push(row[column] ?? null);
    const tuples =
      dialect === 'sqlite'
        ? Array<string>(chunk.length).fill(sqliteTuple)
        : chunk.map((_row, rowIndex) => `(${columns.map((_column, columnIndex) => `$${rowIndex * columns.length + columnIndex + 1}`).join(',')})`);
    const text = `INSERT INTO ${table} (${columnList}) VALUES ${tuples.join(',')}`;
    await trx.executeQuery(CompiledQuery.raw(text, parameters));
  }
}
