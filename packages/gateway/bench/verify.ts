/**
 * After a run, with the gateway stopped: is every message answered with a 202 in the database?
 * The database may hold a few more than were answered (requests in flight when the load stopped
 * were committed, but their answers were never read); it must never hold fewer.
 */
import { join } from 'node:path';
import { openSqliteDatabase } from '../src/store/sqlite-driver.ts';
import pg from 'pg';

export interface StoreCheck {
  /** Rows in messages. */
  stored: number;
  /** msg_ids answered with 202. */
  answered: number;
  /** Of those, how many are missing from the database (must be 0). */
  missing: number;
  /** stored - answered: committed while their answers were cut off at the end of the run. */
  unanswered: number;
  /** PostgreSQL only: transactions committed in the gateway's database over its whole life. */
  transactions: number | null;
}

const SQLITE_CHUNK = 30_000;
const POSTGRES_CHUNK = 50_000;

export function checkSqlite(dataDir: string, ids: string[]): StoreCheck {
  const db = openSqliteDatabase(join(dataDir, 'tms.sqlite'), { readonly: true });
  try {
    const stored = (db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n;
    let found = 0;
    for (let start = 0; start < ids.length; start += SQLITE_CHUNK) {
      const chunk = ids.slice(start, start + SQLITE_CHUNK);
      const statement = db.prepare(`SELECT count(*) AS n FROM messages WHERE id IN (${chunk.map(() => '?').join(',')})`);
      found += (statement.get(...chunk) as { n: number }).n;
    }
    return { stored, answered: ids.length, missing: ids.length - found, unanswered: stored - ids.length, transactions: null };
  } finally {
    db.close();
  }
}

export async function checkPostgres(databaseUrl: string, adminUrl: string, ids: string[]): Promise<StoreCheck> {
  const name = new URL(databaseUrl).pathname.slice(1);
  // Read the counters first, from another database, so this check's own queries are not counted.
  // Backends flush their statistics when they exit, shortly after the gateway closed its pool.
  await new Promise((resolveWait) => setTimeout(resolveWait, 1500));
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  let transactions: number | null = null;
  try {
    const row = (await admin.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [name])).rows[0];
    transactions = row ? Number(row.n) : null;
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const stored = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM messages')).rows[0]!.n);
    let found = 0;
    for (let start = 0; start < ids.length; start += POSTGRES_CHUNK) {
      const chunk = ids.slice(start, start + POSTGRES_CHUNK);
      found += Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE id = ANY($1::text[])', [chunk])).rows[0]!.n);
    }
    return { stored, answered: ids.length, missing: ids.length - found, unanswered: stored - ids.length, transactions };
  } finally {
    await client.end();
  }
}
