/**
 * The rounds of WAL checkpoints (see wal-checkpoints.ts), on a connection of their own, on whichever
 * thread runs them: the checkpoint thread, or the workers' thread of `tms start`.
 */
import { openSqliteDatabase, type SqliteConnection } from './sqlite-driver.ts';
import type { WriteLock } from './write-lock.ts';

/**
 * How long the holding phase waits for another process's writer or a reader still in the log.
 * It holds this process's writers meanwhile, so it gives up soon and tries again next round.
 */
const HOLDING_BUSY_TIMEOUT_MS = 100;

export class CheckpointRounds {
  readonly #connection: SqliteConnection;
  #stopping = false;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> = Promise.resolve();

  constructor(
    file: string,
    private readonly writeLock: WriteLock,
    private readonly intervalMs: number,
    private readonly onFailure: (error: Error) => void,
  ) {
    this.#connection = openSqliteDatabase(file);
    this.#connection.pragma(`busy_timeout = ${HOLDING_BUSY_TIMEOUT_MS}`);
  }

  start(): void {
    this.#scheduleRound();
  }

  #scheduleRound(): void {
    // Never what keeps a thread alive: its owner stops the rounds before it ends.
    this.#timer = setTimeout(() => {
      this.#round = this.#checkpoint()
        .catch((error: unknown) => this.onFailure(error instanceof Error ? error : new Error(String(error))))
        .finally(() => {
          if (!this.#stopping) this.#scheduleRound();
        });
    }, this.intervalMs).unref();
  }

  /** Lets the round in progress finish, then closes the connection. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    await this.#round;
    this.#connection.close();
  }

  async #checkpoint(): Promise<void> {
    this.#connection.pragma('wal_checkpoint(PASSIVE)');
    await this.writeLock.acquire();
    try {
      this.#connection.pragma('wal_checkpoint(RESTART)');
    } finally {
      this.writeLock.release();
    }
  }
}
