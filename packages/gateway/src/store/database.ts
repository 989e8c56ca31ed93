import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseConfig } from '../config/config.ts';
import type { Database } from './schema.ts';
import { DurableSqliteDialect } from './sqlite-dialect.ts';
import { openSqliteDatabase } from './sqlite-driver.ts';
import { WalSync } from './wal-sync.ts';
import type { WriteLock } from './write-lock.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /**
   * Resolves once every commit made so far is on disk. PostgreSQL's COMMIT is durable when it
   * answers; SQLite's is once its write-ahead log has been synced (see WalSync).
   */
  waitUntilDurable(): Promise<void>;
  close(): Promise<void>;
}

/** A Kysely instance bound to one connection inside a transaction. */
export type Transaction = Kysely<Database>;

// PostgreSQL returns bigint and numeric as strings; every value we keep fits in a double.
pg.types.setTypeParser(20, (value) => Number(value));
pg.types.setTypeParser(1700, (value) => Number(value));

/** SQLite's page cache per connection (pages kept in memory, up to this size). */
const SQLITE_CACHE_KIB = 64 * 1024;

function openSqlite(file: string, writeLock: WriteLock | null): Store {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const raw = openSqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  // NORMAL: a commit does not fsync on this thread. Every write still waits for the WAL to be on
  // disk before it is reported done (WalSync), so a 202 is never sent for a message that could
  // vanish in a power loss, and concurrent writers share one fsync.
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 10000');
  raw.pragma('foreign_keys = ON');
  // SQLite's default page cache is 2 MB. On a store of millions of messages, the inner pages of the
  // message indexes alone exceed it, so every insert and status change re-read pages through the
  // kernel. The cache fills only as pages are used: a small store pays nothing for the larger limit.
  raw.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  const walSync = new WalSync(file);
  const db = new Kysely<Database>({ dialect: new DurableSqliteDialect(raw, walSync, writeLock) });
  return { db, dialect: 'sqlite', waitUntilDurable: () => walSync.sync(), close: () => db.destroy() };
}

function openPostgres(url: string, poolSize: number): Store {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // A connection that PostgreSQL closes (restart, failover, pg_terminate_backend, idle timeout) is
  // reported as an 'error' event: by the pool for an idle client, by the client itself when it is
  // checked out between two queries. Unheard, the event is thrown and takes the whole process down.
  // Nothing is lost by listening: a query on that client fails through its own promise (the
  // transaction rolls back), the pool discards the client and the next query connects anew.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', waitUntilDurable: () => Promise.resolve(), close: () => db.destroy() };
}

/**
 * Opens the store for this thread. `writeLock`: on SQLite, the lock shared with the other threads
 * of this process that open the same database (PostgreSQL needs none).
 */
export function openStore(config: DatabaseConfig, writeLock: WriteLock | null = null): Store {
  return config.kind === 'sqlite' ? openSqlite(config.file, writeLock) : openPostgres(config.url, config.poolSize);
}

const RETRYABLE_POSTGRES_CODES = new Set(['40P01', '40001']);
const MAX_TRANSACTION_ATTEMPTS = 5;

/** A PostgreSQL deadlock or serialisation failure: the work may be run again as it was. */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE_POSTGRES_CODES.has(code);
}

/**
 * Runs work in one transaction on one connection. SQLite takes the write lock up front
 * (BEGIN IMMEDIATE) so two processes never deadlock upgrading a read lock; PostgreSQL retries
 * the whole unit on a deadlock or serialisation failure, so `work` must only touch the database.
 */
export async function runInTransaction<T>(store: Store, work: (trx: Transaction) => Promise<T>): Promise<T> {
  const begin = store.dialect === 'sqlite' ? sql`BEGIN IMMEDIATE` : sql`BEGIN`;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await store.db.connection().execute(async (connection) => {
        await begin.execute(connection);
        try {
          const result = await work(connection);
          await sql`COMMIT`.execute(connection);
          return result;
        } catch (error) {
          await sql`ROLLBACK`.execute(connection).catch(() => undefined);
          throw error;
        }
      });
      // After the connection is given back: the next transaction runs while this one reaches disk.
      await store.waitUntilDurable();
      return result;
    } catch (error) {
      if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isRetryableConflict(error)) throw error;
    }
  }
}

/** Is this a unique-constraint violation, on either store? */
export function isUniqueViolation(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Answers when the store does: one trivial query. */
export async function pingStore(store: Store): Promise<void> {
  await sql`SELECT 1`.execute(store.db);
}
