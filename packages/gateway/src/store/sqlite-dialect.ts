import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import type { SqliteConnection } from './sqlite-driver.ts';
import type { WalSync } from './wal-sync.ts';
import type { WriteLock } from './write-lock.ts';

type Statement = ReturnType<SqliteConnection['prepare']>;

const STATEMENT_CACHE_SIZE = 500;

/**
 * One better-sqlite3 connection as a Kysely connection, with two differences from Kysely's own
 * SQLite driver:
 * - prepared statements are kept by their SQL text (Kysely prepares every query anew, and
 *   preparing costs as much as running a small statement);
 * - a statement that writes outside a transaction, or the COMMIT that ends one, resolves only once
 *   the WAL is on disk (see WalSync), so "done" always means durable;
 * - with a WriteLock (the process's other threads have connections too), the lock is held from
 *   BEGIN to COMMIT or ROLLBACK, and around a statement that writes outside a transaction.
 */
class DurableSqliteConnection implements DatabaseConnection {
  readonly #raw: SqliteConnection;
  readonly #walSync: WalSync;
  readonly #writeLock: WriteLock | null;
  readonly #statements = new Map<string, Statement>();
  #holdsWriteLock = false;

  constructor(raw: SqliteConnection, walSync: WalSync, writeLock: WriteLock | null) {
    this.#raw = raw;
    this.#walSync = walSync;
    this.#writeLock = writeLock;
  }

  async executeQuery<Row>(query: CompiledQuery): Promise<QueryResult<Row>> {
    const statement = this.#prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (this.#writeLock && !this.#holdsWriteLock && startsWrite(statement, this.#raw)) {
      await this.#writeLock.acquire();
      this.#holdsWriteLock = true;
    }
    let result: QueryResult<Row>;
    try {
      if (statement.reader) {
        result = { rows: statement.all(parameters) as Row[] };
      } else {
        const { changes, lastInsertRowid } = statement.run(parameters);
        result = { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
      }
    } finally {
      if (this.#holdsWriteLock && !this.#raw.inTransaction) {
        this.#holdsWriteLock = false;
        this.#writeLock?.release();
      }
    }
    // SQLite counts transaction control (BEGIN, COMMIT) as read-only: a COMMIT's durability is
    // awaited by its transaction once it has given the connection and the write lock back
    // (runInTransaction).
    if (!statement.readonly && !this.#raw.inTransaction) await this.#walSync.sync();
    return result;
  }

  // The store reads through pages, never streams.
  // eslint-disable-next-line require-yield
  async *streamQuery<Row>(): AsyncIterableIterator<QueryResult<Row>> {
    throw new Error('the SQLite store does not stream query results');
  }

  #prepare(sqlText: string): Statement {
    let statement = this.#statements.get(sqlText);
    if (!statement) {
      statement = this.#raw.prepare(sqlText);
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) this.#statements.delete(this.#statements.keys().next().value as string);
      this.#statements.set(sqlText, statement);
    }
    return statement;
  }
}

/**
 * Does running this statement now take SQLite's write lock, or may it (a BEGIN: the transactions
 * of the store write, and a deferred one would otherwise take the lock halfway)?
 */
function startsWrite(statement: Statement, raw: SqliteConnection): boolean {
  if (raw.inTransaction) return false;
  return !statement.readonly || /^\s*begin\b/i.test(statement.source);
}

/** SQLite has one connection: whoever holds it waits for nobody, the rest queue in order. */
class ConnectionQueue {
  #tail: Promise<void> = Promise.resolve();

  /** Resolves, with the function that lets the next one in, once the connection is ours. */
  async take(): Promise<() => void> {
    let release!: () => void;
    const ours = new Promise<void>((resolve) => (release = resolve));
    const before = this.#tail;
    this.#tail = before.then(() => ours);
    await before;
    return release;
  }
}

class DurableSqliteDriver implements Driver {
  readonly #raw: SqliteConnection;
  readonly #walSync: WalSync;
  readonly #connection: DurableSqliteConnection;
  readonly #queue = new ConnectionQueue();
  #release: (() => void) | null = null;

  constructor(raw: SqliteConnection, walSync: WalSync, writeLock: WriteLock | null) {
    this.#raw = raw;
    this.#walSync = walSync;
    this.#connection = new DurableSqliteConnection(raw, walSync, writeLock);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    this.#release = await this.#queue.take();
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
    await this.#walSync.sync();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = null;
    release?.();
  }

  async destroy(): Promise<void> {
    this.#raw.close();
    this.#walSync.close();
  }
}

export class DurableSqliteDialect implements Dialect {
  readonly #raw: SqliteConnection;
  readonly #walSync: WalSync;
  readonly #writeLock: WriteLock | null;

  constructor(raw: SqliteConnection, walSync: WalSync, writeLock: WriteLock | null = null) {
    this.#raw = raw;
    this.#walSync = walSync;
    this.#writeLock = writeLock;
  }

  createDriver(): Driver {
    return new DurableSqliteDriver(this.#raw, this.#walSync, this.#writeLock);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
