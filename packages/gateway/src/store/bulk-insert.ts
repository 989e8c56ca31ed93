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
  const columns = Object.keys(first) as (keyof Row)[];
  const rowsPerStatement = Math.max(1, Math.floor(MAX_PARAMETERS[dialect] / columns.length));
  for (let start = 0; start < rows.length; start += rowsPerStatement) {
    const chunk = rows.slice(start, start + rowsPerStatement);
    const parameters: unknown[] = [];
    const tuples: string[] = [];
    for (const row of chunk) {
      const placeholders: string[] = [];
      for (const column of columns) {
        parameters.push(row[column] ?? null);
        placeholders.push(dialect === 'sqlite' ? '?' : `$${parameters.length}`);
      }
      tuples.push(`(${placeholders.join(',')})`);
    }
    const text = `INSERT INTO ${table} (${columns.join(',')}) VALUES ${tuples.join(',')}`;
    await trx.executeQuery(CompiledQuery.raw(text, parameters));
  }
}
