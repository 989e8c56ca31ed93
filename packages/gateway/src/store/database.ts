import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { DatabaseConfig } from '../config/config.ts';
import type { Database } from './schema.ts';
import { DurableSqliteDialect } from './sqlite-dialect.ts';
import { openSqliteDatabase, type SqliteConnection } from './sqlite-driver.ts';
import { runWalCheckpointsHere, startWalCheckpoints, type WalCheckpoints } from './wal-checkpoints.ts';
import { WalSync } from './wal-sync.ts';
import { WriteLock } from './write-lock.ts';
import { StatementNames, isStalePreparedStatement, runNamedStatements } from './postgres-prepared-statements.ts';

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

let postgresDriver: typeof pg | undefined;

/**
 * The PostgreSQL driver, loaded when a PostgreSQL store is first opened: a gateway on SQLite then
 * never holds it (about 3 MB of heap in each of its threads).
 */
function loadPostgresDriver(): typeof pg {
  if (postgresDriver) return postgresDriver;
  const driver = createRequire(import.meta.url)('pg') as typeof pg;
  // PostgreSQL returns bigint and numeric as strings; every value we keep fits in a double.
  driver.types.setTypeParser(20, (value) => Number(value));
  driver.types.setTypeParser(1700, (value) => Number(value));
  return (postgresDriver = driver);
}

/** Where SQLite keeps temporary tables while serving (see openSqlite). */
export const SQLITE_TEMP_STORE = 'MEMORY';

/** SQLite's page cache per connection (pages kept in memory, up to this size). */
const SQLITE_CACHE_KIB = 64 * 1024;

/** How a store is opened; the defaults suit a short-lived command (migrations, `tms admin`, tests). */
export interface StoreOptions {
  /** SQLite: the write lock shared with the process's other threads on the same database. */
  writeLock?: WriteLock | null;
  /**
   * SQLite: who copies the write-ahead log into the database file (see wal-checkpoints.ts).
   * 'on-commit' (SQLite's own way): the commit that makes the log pass 1,000 pages, on its thread.
   * 'background': a thread this store starts and stops (sharing writeLock, or a lock of its own).
   * 'this-thread': rounds on this thread's event loop, on a connection of their own (sharing
   * writeLock, or a lock of its own).
   * 'elsewhere': the rounds of another store in this process.
   */
  walCheckpoints?: 'on-commit' | 'background' | 'this-thread' | 'elsewhere';
  /**
   * SQLite: where a write's fsync of the write-ahead log runs (see WalSync). 'adaptive' (the
   * default): on the event loop while the disk answers fast, else on libuv's thread pool.
   * 'thread-pool': always on the pool, for an event loop that also reads the network's answers (the
   * workers').
   */
  walFsyncs?: 'adaptive' | 'thread-pool';
  /** Hears of a failed background checkpoint (the next round tries again). */
  onCheckpointFailure?: (error: Error) => void;
}

const JOURNAL_MODE_SWITCH_DEADLINE_MS = 10_000;
const JOURNAL_MODE_SWITCH_PAUSE_MS = 20;

/**
 * Puts a database into WAL mode, waiting for other processes doing the same. Switching a fresh
 * database needs its exclusive lock, and SQLite answers SQLITE_BUSY at once, without the busy
 * handler, when another connection is in the middle of the same switch: several `tms` processes
 * started together on a new data directory would otherwise fail at random.
 */
function switchToWriteAheadLog(raw: SqliteConnection): void {
  const deadline = Date.now() + JOURNAL_MODE_SWITCH_DEADLINE_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      raw.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      const busy = (error as { code?: unknown }).code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= deadline) throw error;
      // Opening a store is synchronous; this runs once per process start, never while serving.
      Atomics.wait(pause, 0, 0, JOURNAL_MODE_SWITCH_PAUSE_MS);
    }
  }
}

/** The checkpoint rounds this store runs itself, if any: on a thread of their own, or on this one. */
function startCheckpoints(mode: StoreOptions['walCheckpoints'], file: string, writeLock: WriteLock, onFailure: (error: Error) => void): WalCheckpoints | null {
  if (mode === 'background') return startWalCheckpoints(file, writeLock, onFailure);
  if (mode === 'this-thread') return runWalCheckpointsHere(file, writeLock, onFailure);
  return null;
}

function openSqlite(file: string, options: StoreOptions): Store {
  const walCheckpoints = options.walCheckpoints ?? 'on-commit';
  // The checkpoint rounds hold this store's writers back through the lock while they finish a round.
  const writeLock = options.writeLock ?? (walCheckpoints === 'background' || walCheckpoints === 'this-thread' ? new WriteLock() : null);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const raw = openSqliteDatabase(file);
  switchToWriteAheadLog(raw);
  // NORMAL: a commit does not fsync while it holds the write lock. Every write still waits for the
  // WAL to be on disk before it is reported done (WalSync), so a 202 is never sent for a message
  // that could vanish in a power loss.
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 10000');
  raw.pragma('foreign_keys = ON');
  // Erased values (an RSA ciphertext once sent, personal data past retention) are overwritten with
  // zeros, not left in the page's free space where a copy of the file would still hold them. FAST
  // zeroes them inside the pages being written anyway, at no extra I/O; only pages that go to the
  // freelist whole keep their bytes until reused.
  raw.pragma('secure_delete = FAST');
  // SQLite's default page cache is 2 MB. On a store of millions of messages, the inner pages of the
  // message indexes alone exceed it, so every insert and status change re-read pages through the
  // kernel. The cache fills only as pages are used: a small store pays nothing for the larger limit.
  raw.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  // SQLite keeps the rows of a RETURNING clause in a temporary table. With temporary storage in
  // files, each such statement created, unlinked and closed a file: about 100 µs of system calls
  // for a one-row UPDATE … RETURNING that costs 4 µs without the clause. The serving statements
  // return a batch of rows at most; migrations, which may sort millions of index entries, switch
  // back to files while they run (migrate.ts).
  raw.pragma(`temp_store = ${SQLITE_TEMP_STORE}`);
  if (walCheckpoints !== 'on-commit') raw.pragma('wal_autocheckpoint = 0');
  const walSync = new WalSync(file, { mode: options.walFsyncs });
  const db = new Kysely<Database>({ dialect: new DurableSqliteDialect(raw, walSync, writeLock) });
  const checkpoints = writeLock ? startCheckpoints(walCheckpoints, file, writeLock, options.onCheckpointFailure ?? (() => undefined)) : null;
  const close = async (): Promise<void> => {
    await checkpoints?.stop();
    await db.destroy();
  };
  return { db, dialect: 'sqlite', waitUntilDurable: () => walSync.sync(), close };
}

function openPostgres({ url, poolSize, preparedStatements = true }: Extract<DatabaseConfig, { kind: 'postgres' }>): Store {
  // A connection lives 10 minutes at most: its prepared statements go with it, and the generic plans
  // PostgreSQL chose for them are chosen again for the tables as they are now, whether or not
  // autovacuum has analysed them since.
  const pool = new (loadPostgresDriver().Pool)({ connectionString: url, max: poolSize, maxLifetimeSeconds: 600 });
  const statementNames = preparedStatements ? new StatementNames() : null;
  // A connection that PostgreSQL closes (restart, failover, pg_terminate_backend, idle timeout) is
  // reported as an 'error' event: by the pool for an idle client, by the client itself when it is
  // checked out between two queries. Unheard, the event is thrown and takes the whole process down.
  // Nothing is lost by listening: a query on that client fails through its own promise (the
  // transaction rolls back), the pool discards the client and the next query connects anew.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    if (statementNames) runNamedStatements(client, statementNames);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', waitUntilDurable: () => Promise.resolve(), close: () => db.destroy() };
}

/** Opens the store for this thread (the options concern SQLite only). */
export function openStore(config: DatabaseConfig, options: StoreOptions = {}): Store {
  return config.kind === 'sqlite' ? openSqlite(config.file, options) : openPostgres(config);
}

const RETRYABLE_POSTGRES_CODES = new Set(['40P01', '40001']);
const MAX_TRANSACTION_ATTEMPTS = 5;

/** A PostgreSQL deadlock, serialisation failure or stale prepared statement: the work may be run again as it was. */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && RETRYABLE_POSTGRES_CODES.has(code)) || isStalePreparedStatement(error);
}

export interface TransactionOptions {
  /**
   * Whether the transaction resolves only once it is on disk (the default). False for bookkeeping
   * that is safe to redo, whose loss in a power failure (not a crash of the process) only repeats
   * work: it resolves at COMMIT, and reaches the disk with the next durable write or checkpoint
   * (PostgreSQL: synchronous_commit off for this transaction).
   */
  durable?: boolean;
}

const BEGIN_SQLITE = sql`BEGIN IMMEDIATE`;
const BEGIN_POSTGRES = sql`BEGIN`;
const BEGIN_POSTGRES_WITHOUT_DISK_WAIT = sql`BEGIN; SET LOCAL synchronous_commit TO OFF`;

/**
 * Runs work in one transaction on one connection. SQLite takes the write lock up front
 * (BEGIN IMMEDIATE) so two processes never deadlock upgrading a read lock; PostgreSQL retries
 * the whole unit on a deadlock or serialisation failure, so `work` must only touch the database.
 */
export async function runInTransaction<T>(store: Store, work: (trx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const durable = options.durable ?? true;
  const begin = store.dialect === 'sqlite' ? BEGIN_SQLITE : durable ? BEGIN_POSTGRES : BEGIN_POSTGRES_WITHOUT_DISK_WAIT;
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
      // After the connection and the write lock are given back: another thread's writers go on while
      // this one reaches disk (and, when the fsync runs on the pool, this thread's next transaction).
      if (durable) await store.waitUntilDurable();
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
