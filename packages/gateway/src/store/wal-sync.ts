import { closeSync, fsync, fsyncSync, openSync } from 'node:fs';

/**
 * While the fsyncs timed on the event loop take this many milliseconds on average or less, they run
 * there. Handing one to libuv's thread pool wakes a pool thread and takes the answer back through
 * the event loop, which on a busy machine costs more than waiting: on a disk that syncs a 4 KB
 * append in 0.3 ms (p99 1.2 ms) and a 500-recipient batch's commit in about 2.3 ms, single sends
 * and batches took 11–14% less CPU on the event loop (README, Benchmarks). On a slower disk (a
 * network file system, say) the event loop goes on while the pool waits for it.
 */
const INLINE_FSYNC_LIMIT_MS = 4;
/** How much each timed fsync moves the average: one fsync of a few milliseconds among fast ones does not move the fsyncs to the pool. */
const AVERAGE_WEIGHT = 0.1;
/** While the fsyncs go to the pool, one is timed on the event loop this often (a probe), to see whether the disk got faster. */
const PROBE_PERIOD_MS = 1000;
/**
 * How much a probe moves the average: more than one fsync among many, since it is the only one timed
 * each second. After a spell of slow fsyncs (a burst of writes at start-up, say), three or four
 * fast probes bring the fsyncs back to the event loop.
 */
const PROBE_WEIGHT = 0.5;

export interface WalSyncOptions {
  /** 'adaptive' (the default): on the calling thread while the disk is fast, as above. 'thread-pool': always on the pool. */
  mode?: 'adaptive' | 'thread-pool';
  /** Milliseconds, monotonic. */
  clock?: () => number;
}

/**
 * Makes SQLite's write-ahead log durable, and says when.
 *
 * The store commits with `synchronous = NORMAL`: a commit appends to the WAL without waiting for
 * the disk. Before a write is reported done, its caller waits for `sync()`, an fsync of the WAL:
 * every commit appended before that fsync started is then on disk, so a writer that waits is
 * exactly as durable as with `synchronous = FULL`.
 *
 * On a disk that answers within INLINE_FSYNC_LIMIT_MS on average the fsync runs on the calling
 * thread, within the caller's task: its event loop waits for the disk meanwhile, as it does for
 * every page SQLite reads or writes. On a slower disk (a network volume, or a spell of heavy I/O)
 * it runs on libuv's thread pool, so the event loop goes on meanwhile, and writers that commit
 * while one fsync runs share the next.
 */
export class WalSync {
  readonly #walFile: string;
  readonly #adaptive: boolean;
  readonly #clock: () => number;
  #descriptor: number | null = null;
  /** The fsyncs timed on the event loop, on average (weighted to the latest). */
  #averageMs = 0;
  /** While the average is over the limit: when (clock time) the next fsync is timed on the event loop. */
  #probeAt = 0;
  /** The pool's fsync running now; it may have started before the caller's commit. */
  #running: Promise<void> | null = null;
  /** The pool's fsync that starts once the running one ends: it covers every commit made meanwhile. */
  #next: Promise<void> | null = null;

  constructor(databaseFile: string, options: WalSyncOptions = {}) {
    this.#walFile = `${databaseFile}-wal`;
    this.#adaptive = (options.mode ?? 'adaptive') === 'adaptive';
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** Resolves once every commit made before this call is on disk. */
  sync(): Promise<void> {
    if (this.#syncsOnThisThread()) return this.#syncInline();
    if (this.#next) return this.#next;
    if (!this.#running) return this.#startOnPool();
    // Under steady writes a pool fsync is nearly always in flight: a probe that falls due meanwhile
    // runs here, once the pool's fsync has ended.
    const startAfterRunning = (): Promise<void> => {
      this.#next = null;
      return this.#syncsOnThisThread() ? this.#syncInline() : this.#startOnPool();
    };
    this.#next = this.#running.then(startAfterRunning, startAfterRunning);
    return this.#next;
  }

  /**
   * While the disk has been fast, or when a probe is due; never while a pool fsync of this log is in
   * flight: two fsyncs of one file at once may report a write error to only one of them, and the
   * other's writers would be told they were durable.
   */
  #syncsOnThisThread(): boolean {
    if (!this.#adaptive || this.#running || this.#next) return false;
    return this.#averageMs <= INLINE_FSYNC_LIMIT_MS || this.#clock() >= this.#probeAt;
  }

  close(): void {
    if (this.#descriptor !== null) closeSync(this.#descriptor);
    this.#descriptor = null;
  }

  /** The WAL exists once the first transaction has committed, so it is opened on the first sync. */
  #openLog(): number {
    // fsync flushes the file itself, whichever descriptor wrote to it.
    this.#descriptor ??= openSync(this.#walFile, 'r');
    return this.#descriptor;
  }

  #syncInline(): Promise<void> {
    const started = this.#clock();
    try {
      fsyncSync(this.#openLog());
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const ended = this.#clock();
    const weight = this.#averageMs > INLINE_FSYNC_LIMIT_MS ? PROBE_WEIGHT : AVERAGE_WEIGHT;
    this.#averageMs += (ended - started - this.#averageMs) * weight;
    if (this.#averageMs > INLINE_FSYNC_LIMIT_MS) this.#probeAt = ended + PROBE_PERIOD_MS;
    return Promise.resolve();
  }

  #startOnPool(): Promise<void> {
    let descriptor: number;
    try {
      descriptor = this.#openLog();
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const running = new Promise<void>((resolve, reject) => fsync(descriptor, (error) => (error ? reject(error) : resolve())));
    this.#running = running;
    const clear = (): void => {
      if (this.#running === running) this.#running = null;
    };
    running.then(clear, clear);
    return running;
  }
}
