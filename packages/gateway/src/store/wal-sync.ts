import { closeSync, fsync, openSync } from 'node:fs';

/**
 * Makes SQLite's write-ahead log durable off the event loop.
 *
 * The store commits with `synchronous = NORMAL`: a commit appends to the WAL without waiting for
 * the disk, and so never blocks the event loop on an fsync. Before a write is reported done, its
 * caller waits for `sync()`: an fsync of the WAL on libuv's thread pool. Every commit appended
 * before that fsync started is then on disk, so a writer that waits is exactly as durable as with
 * `synchronous = FULL`, and writers that commit while one fsync runs share the next one.
 */
export class WalSync {
  readonly #walFile: string;
  #descriptor: number | null = null;
  /** The fsync running now; it may have started before the caller's commit. */
  #running: Promise<void> | null = null;
  /** The fsync that starts once the running one ends: it covers every commit made meanwhile. */
  #next: Promise<void> | null = null;

  constructor(databaseFile: string) {
    this.#walFile = `${databaseFile}-wal`;
  }

  /** Resolves once every commit made before this call is on disk. */
  sync(): Promise<void> {
    if (this.#next) return this.#next;
    if (!this.#running) return this.#start();
    const startAfterRunning = (): Promise<void> => {
      this.#next = null;
      return this.#start();
    };
    this.#next = this.#running.then(startAfterRunning, startAfterRunning);
    return this.#next;
  }

  close(): void {
    if (this.#descriptor !== null) closeSync(this.#descriptor);
    this.#descriptor = null;
  }

  #start(): Promise<void> {
    // The WAL exists once the first transaction has committed, so it is opened on the first sync.
    // fsync flushes the file itself, whichever descriptor wrote to it.
    try {
      this.#descriptor ??= openSync(this.#walFile, 'r');
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const descriptor = this.#descriptor;
    const running = new Promise<void>((resolve, reject) => fsync(descriptor, (error) => (error ? reject(error) : resolve())));
    this.#running = running;
    const clear = (): void => {
      if (this.#running === running) this.#running = null;
    };
    running.then(clear, clear);
    return running;
  }
}
