/**
 * The schema of a SQLite store as SQL: SQLite keeps each table, index, trigger and view as the
 * statement that made it (ALTER TABLE edits that text), so the dump is those statements, in a
 * stable order: each table followed by its indexes and triggers, then the views.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

interface SchemaObject {
  type: 'table' | 'index' | 'trigger' | 'view';
  name: string;
  table_name: string;
  sql: string;
}

const TYPE_ORDER: Readonly<Record<SchemaObject['type'], number>> = { table: 0, index: 1, trigger: 2, view: 3 };

function compareObjects(left: SchemaObject, right: SchemaObject): number {
  // Views sort after every table; everything else groups under its table.
  const leftGroup = left.type === 'view' ? `~${left.name}` : left.table_name;
  const rightGroup = right.type === 'view' ? `~${right.name}` : right.table_name;
  if (leftGroup !== rightGroup) return leftGroup < rightGroup ? -1 : 1;
  if (left.type !== right.type) return TYPE_ORDER[left.type] - TYPE_ORDER[right.type];
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

/** Statements that recreate the schema, tables separated by a blank line. */
export async function dumpSqliteSchema(db: Kysely<Database>): Promise<string> {
  // Indexes SQLite makes for PRIMARY KEY and UNIQUE have no SQL: their table's statement implies them.
  const { rows } = await sql<SchemaObject>`
    SELECT type, name, tbl_name AS table_name, sql FROM sqlite_master
    WHERE sql IS NOT NULL AND substr(name, 1, 7) <> 'sqlite_'`.execute(db);
  const sorted = [...rows].sort(compareObjects);
  const blocks: string[] = [];
  for (const object of sorted) {
    const statement = `${object.sql.trim()};`;
    if (object.type === 'table' || object.type === 'view' || blocks.length === 0) blocks.push(statement);
    else blocks[blocks.length - 1] += `\n${statement}`;
  }
  return blocks.join('\n\n');
}
