/**
 * The schema of a PostgreSQL store as SQL, read from the system catalogs of the current schema
 * rather than with pg_dump, which may be missing or of another major version than the server.
 * Covers what migrations make: tables (columns with type, default and nullability; constraints),
 * indexes, views, sequences, functions, triggers and enum types. Deterministic: everything is
 * ordered by name (columns by position), and nothing machine-specific (OIDs, times) is printed.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

interface TableColumn {
  table_name: string;
  column_name: string;
  type: string;
  /** The column's collation when it is not its type's default (the database's), quoted: '"C"'. */
  collation: string | null;
  not_null: boolean;
  default_value: string | null;
  /** '' or the identity kind: 'a' (ALWAYS) or 'd' (BY DEFAULT). */
  identity: string;
  /** '' or 's' for a stored generated column, whose default_value is the expression. */
  generated: string;
}

interface TableConstraint {
  table_name: string;
  name: string;
  definition: string;
}

interface NamedDefinition {
  name: string;
  definition: string;
}

function columnDefinition(column: TableColumn): string {
  const parts = [column.column_name, column.type];
  if (column.collation !== null) parts.push(`COLLATE ${column.collation}`);
  if (column.generated === 's') parts.push(`GENERATED ALWAYS AS (${column.default_value ?? ''}) STORED`);
  else if (column.default_value !== null) parts.push(`DEFAULT ${column.default_value}`);
  if (column.identity !== '') parts.push(`GENERATED ${column.identity === 'a' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY`);
  if (column.not_null) parts.push('NOT NULL');
  return parts.join(' ');
}

function groupByTable<Row extends { table_name: string }>(rows: readonly Row[]): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const row of rows) groups.set(row.table_name, [...(groups.get(row.table_name) ?? []), row]);
  return groups;
}

interface TableStatement {
  name: string;
  statement: string;
}

async function readTables(db: Kysely<Database>): Promise<TableStatement[]> {
  const { rows: tables } = await sql<{ table_name: string }>`
    SELECT quote_ident(c.relname) AS table_name
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
    ORDER BY c.relname`.execute(db);
  const { rows: columns } = await sql<TableColumn>`
    SELECT quote_ident(c.relname) AS table_name, quote_ident(a.attname) AS column_name,
      format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
      CASE WHEN a.attcollation <> t.typcollation THEN quote_ident(co.collname) END AS collation,
      pg_get_expr(d.adbin, d.adrelid) AS default_value, a.attidentity AS identity, a.attgenerated AS generated
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_collation co ON co.oid = a.attcollation
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY c.relname, a.attnum`.execute(db);
  // NOT NULL shows on its column (PostgreSQL 18 also lists it as a constraint); keys first, then checks.
  const { rows: constraints } = await sql<TableConstraint>`
    SELECT quote_ident(c.relname) AS table_name, quote_ident(con.conname) AS name, pg_get_constraintdef(con.oid) AS definition
    FROM pg_constraint con
    JOIN pg_class c ON c.oid = con.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND con.contype IN ('p', 'u', 'x', 'f', 'c')
    ORDER BY c.relname, position(con.contype::text IN 'puxfc'), con.conname`.execute(db);
  const columnsByTable = groupByTable(columns);
  const constraintsByTable = groupByTable(constraints);
  return tables.map(({ table_name: name }) => {
    const lines = [
      ...(columnsByTable.get(name) ?? []).map(columnDefinition),
      ...(constraintsByTable.get(name) ?? []).map((constraint) => `CONSTRAINT ${constraint.name} ${constraint.definition}`),
    ];
    return { name, statement: `CREATE TABLE ${name} (\n${lines.map((line) => `  ${line}`).join(',\n')}\n);` };
  });
}

/** Indexes other than those that back a primary key, unique or exclusion constraint, per table. */
async function readIndexes(db: Kysely<Database>): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ table_name: string; definition: string }>`
    SELECT quote_ident(c.relname) AS table_name, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i
    JOIN pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_class c ON c.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema()
      AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u', 'x'))
    ORDER BY c.relname, ic.relname`.execute(db);
  return new Map([...groupByTable(rows)].map(([table, indexes]) => [table, indexes.map((index) => `${index.definition};`)]));
}

async function readTriggers(db: Kysely<Database>): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ table_name: string; definition: string }>`
    SELECT quote_ident(c.relname) AS table_name, pg_get_triggerdef(t.oid) AS definition
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND NOT t.tgisinternal
    ORDER BY c.relname, t.tgname`.execute(db);
  return new Map([...groupByTable(rows)].map(([table, triggers]) => [table, triggers.map((trigger) => `${trigger.definition};`)]));
}

async function readEnumTypes(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<NamedDefinition>`
    SELECT quote_ident(t.typname) AS name,
      string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) AS definition
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_enum e ON e.enumtypid = t.oid
    WHERE n.nspname = current_schema()
    GROUP BY t.typname
    ORDER BY t.typname`.execute(db);
  return rows.map((type) => `CREATE TYPE ${type.name} AS ENUM (${type.definition});`);
}

async function readSequences(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<NamedDefinition>`
    SELECT quote_ident(sequencename) AS name,
      format('AS %s START %s INCREMENT %s MINVALUE %s MAXVALUE %s%s', data_type, start_value, increment_by,
        min_value, max_value, CASE WHEN cycle THEN ' CYCLE' ELSE '' END) AS definition
    FROM pg_sequences
    WHERE schemaname = current_schema()
    ORDER BY sequencename`.execute(db);
  return rows.map((sequence) => `CREATE SEQUENCE ${sequence.name} ${sequence.definition};`);
}

async function readFunctions(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ definition: string }>`
    SELECT pg_get_functiondef(p.oid) AS definition
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = current_schema() AND p.prokind IN ('f', 'p')
    ORDER BY p.proname, pg_get_function_identity_arguments(p.oid) COLLATE "C"`.execute(db);
  return rows.map((routine) => `${routine.definition.trim()};`);
}

async function readViews(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<NamedDefinition & { kind: string }>`
    SELECT quote_ident(c.relname) AS name, pg_get_viewdef(c.oid) AS definition,
      CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END AS kind
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('v', 'm')
    ORDER BY c.relname`.execute(db);
  // pg_get_viewdef ends the query with its own semicolon.
  return rows.map((view) => `CREATE ${view.kind} ${view.name} AS\n${view.definition.trim()}`);
}

/**
 * Statements that describe the schema: types and sequences, then each table followed by its
 * indexes and triggers, then functions and views; blocks separated by a blank line.
 */
export async function dumpPostgresSchema(db: Kysely<Database>): Promise<string> {
  const [tables, indexes, triggers] = [await readTables(db), await readIndexes(db), await readTriggers(db)];
  const tableBlocks = tables.map(({ name, statement }) => [statement, ...(indexes.get(name) ?? []), ...(triggers.get(name) ?? [])].join('\n'));
  const blocks = [
    ...(await readEnumTypes(db)),
    ...(await readSequences(db)),
    ...tableBlocks,
    ...(await readFunctions(db)),
    ...(await readViews(db)),
  ];
  return blocks.join('\n\n');
}
