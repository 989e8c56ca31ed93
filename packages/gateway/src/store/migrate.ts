import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { runInTransaction, type Store } from './database.ts';

const MIGRATIONS_DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'migrations');
/** Any constant: the advisory lock that lets one PostgreSQL process migrate at a time. */
const MIGRATION_LOCK_ID = 727_170_001;

function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}

/**
 * Applies pending forward-only migrations in one transaction. Safe when several processes start
 * at once: PostgreSQL serialises them on an advisory lock, SQLite on its write lock.
 * Returns the versions applied now.
 */
export async function migrate(store: Store, now: number = Date.now()): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR).filter((name) => name.endsWith('.sql')).sort();
  return runInTransaction(store, async (trx) => {
    if (store.dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at bigint NOT NULL)`.execute(trx);
    const applied = new Set((await trx.selectFrom('schema_migrations').select('version').execute()).map((row) => row.version));
    const pending = files.filter((name) => !applied.has(name.replace(/\.sql$/, '')));
    for (const name of pending) {
      for (const statement of splitStatements(readFileSync(join(MIGRATIONS_DIR, name), 'utf8'))) {
        await sql.raw(statement).execute(trx);
      }
      await trx.insertInto('schema_migrations').values({ version: name.replace(/\.sql$/, ''), applied_at: now }).execute();
    }
    return pending.map((name) => name.replace(/\.sql$/, ''));
  });
}
