import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { runInTransaction, SQLITE_TEMP_STORE, type Dialect, type Store, type Transaction } from './database.ts';
import { readMigrationFiles, type MigrationFiles } from './migration-files.ts';
import { splitSqliteStatements } from './sqlite-statements.ts';

/** Where the gateway's migrations live (see migrations/README.md for the rules they follow). */
export const MIGRATIONS_DIRECTORY = join(fileURLToPath(new URL('.', import.meta.url)), 'migrations');
/** Any constant: the advisory lock that lets one PostgreSQL migration transaction run at a time. */
const MIGRATION_LOCK_ID = 727_170_001;

/**
 * Runs one migration file's SQL inside the caller's transaction.
 *
 * PostgreSQL takes the file whole: text sent without parameters goes over the simple query
 * protocol, which runs several statements, so the server's own parser decides where each ends
 * (dollar-quoted function bodies, strings, comments, BEGIN ATOMIC bodies) and no client-side
 * splitter can get it wrong. SQLite cannot: Kysely reaches better-sqlite3 through `prepare`, one
 * statement at a time, so the file is cut by SQLite's own completeness rule (sqlite-statements.ts).
 */
async function runMigrationSql(dialect: Dialect, trx: Transaction, text: string): Promise<void> {
  if (dialect === 'postgres') {
    await sql.raw(text).execute(trx);
    return;
  }
  for (const statement of splitSqliteStatements(text)) await sql.raw(statement).execute(trx);
}

interface MigrationRun {
  readonly store: Store;
  readonly directory: string;
  readonly migrations: readonly MigrationFiles[];
  readonly now: number;
  /** The migration the current transaction is applying, for the error when it fails. */
  attempting: string | null;
}

/**
 * In one transaction: applies the first migration not yet recorded and records it, or returns null
 * when there is none. The applied versions are read under the lock, so a process that waited for
 * another sees what that one committed and never applies a migration twice.
 */
async function applyNextPending(run: MigrationRun, trx: Transaction): Promise<string | null> {
  if (run.store.dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx);
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at bigint NOT NULL)`.execute(trx);
  const applied = new Set((await trx.selectFrom('schema_migrations').select('version').execute()).map((row) => row.version));
  const next = run.migrations.find((migration) => !applied.has(migration.version));
  if (!next) return null;
  run.attempting = next.version;
  await runMigrationSql(run.store.dialect, trx, readFileSync(join(run.directory, next.fileFor[run.store.dialect]), 'utf8'));
  await trx.insertInto('schema_migrations').values({ version: next.version, applied_at: run.now }).execute();
  return next.version;
}

/** Applies pending migrations, one transaction each, until none is left. */
async function applyAllPending(run: MigrationRun): Promise<string[]> {
  const appliedNow: string[] = [];
  for (;;) {
    run.attempting = null;
    let version: string | null;
    try {
      version = await runInTransaction(run.store, (trx) => applyNextPending(run, trx));
    } catch (error) {
      if (run.attempting === null) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`migration ${run.attempting} failed and was rolled back (the migrations before it stay applied): ${reason}`, { cause: error });
    }
    if (version === null) return appliedNow;
    appliedNow.push(version);
  }
}

/**
 * Applies pending forward-only migrations, each in its own transaction with its schema_migrations
 * row: a failing migration is rolled back whole and the ones before it stay applied. Safe when
 * several processes start at once: PostgreSQL serialises each transaction on an advisory lock,
 * SQLite on its write lock; a process returns only once it finds nothing left to apply.
 * Returns the versions this call applied.
 */
export async function migrate(store: Store, now: number = Date.now(), directory: string = MIGRATIONS_DIRECTORY): Promise<string[]> {
  const run: MigrationRun = { store, directory, migrations: readMigrationFiles(directory), now, attempting: null };
  if (store.dialect !== 'sqlite') return applyAllPending(run);
  // A migration that builds an index sorts every row: with temporary storage in memory (the store's
  // setting, database.ts) SQLite would hold the whole sort in memory instead of spilling to files.
  await sql`PRAGMA temp_store = FILE`.execute(store.db);
  try {
    return await applyAllPending(run);
  } finally {
    await sql`PRAGMA temp_store = ${sql.raw(SQLITE_TEMP_STORE)}`.execute(store.db);
  }
}
