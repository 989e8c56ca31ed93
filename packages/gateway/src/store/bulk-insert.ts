import { CompiledQuery } from 'kysely';
import type { Dialect, Transaction } from './database.ts';

/** Bound parameters per statement, under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMETERS: Record<Dialect, number> = { sqlite: 32_000, postgres: 65_000 };

/**
 * Inserts many rows with as few statements as the parameter limits allow. The SQL text is built
 * directly because building a query tree of 500 rows × 25 columns costs more than running it.
 * Table and column names come from our own code, never from input.
 */
export async function insertRows<Row extends object>(trx: Transaction, dialect: Dialect, table: string, rows: Row[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  // Columns that are null in every row are left to their default (NULL): fewer values to bind.
  const columns = (Object.keys(first) as (keyof Row)[]).filter((column) => rows.some((row) => row[column] !== null && row[column] !== undefined));
  const rowsPerStatement = Math.max(1, Math.floor(MAX_PARAMETERS[dialect] / columns.length));
  const columnList = columns.join(',');
  const sqliteTuple = `(${columns.map(() => '?').join(',')})`;
  for (let start = 0; start < rows.length; start += rowsPerStatement) {
    const chunk = rows.slice(start, start + rowsPerStatement);
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
