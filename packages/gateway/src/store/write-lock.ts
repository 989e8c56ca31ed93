/**
 * SQLite's write lock, taken without blocking an event loop, by the threads of one process.
 *
 * Each thread of `tms start` has its own connection to the embedded database. SQLite lets one
 * connection write at a time, and a connection that finds the database locked waits in its busy
 * handler: a sleep on the thread, which stops that thread's event loop. Taking this lock before
 * every write (BEGIN, or a statement that writes outside a transaction) makes the others wait
 * asynchronously instead, so a thread that cannot write goes on serving what it can.
 *
 * The state lives in a SharedArrayBuffer handed to every thread: a ticket lock in two 32-bit cells.
 */
// Atomics.waitAsync is in Node.js 16 and later; TypeScript declares it only from lib ES2024, which
// would also admit APIs that Node.js 20 lacks.
type WaitAsync = (cells: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** Cells: the next ticket to hand out, and the ticket that holds the lock now (first come, first served). */
const NEXT_TICKET = 0;
const SERVING = 1;

/** Any delay: the timer only holds the event loop open while a thread waits, and is cleared after. */
const KEEP_ALIVE_MS = 2 ** 30;

export class WriteLock {
  readonly buffer: SharedArrayBuffer;
  readonly #cells: Int32Array;

  /** A new lock, or (given the buffer of one made in another thread) the same lock. */
  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT)) {
    this.buffer = buffer;
    this.#cells = new Int32Array(buffer);
  }

  /**
   * Resolves once this thread holds the lock; call release() exactly once after. Threads are served
   * in the order they asked, so a thread with a backlog of writes cannot starve another.
   */
  async acquire(): Promise<void> {
    const ticket = Atomics.add(this.#cells, NEXT_TICKET, 1);
    for (let serving = Atomics.load(this.#cells, SERVING); serving !== ticket; serving = Atomics.load(this.#cells, SERVING)) {
      const waiting = waitAsync(this.#cells, SERVING, serving);
      if (!waiting.async) continue;
      // A pending waitAsync does not keep the event loop alive: a thread whose only work is this
      // wait (the workers' thread while it starts) would end, losing its place in line with it.
      const keepAlive = setTimeout(() => undefined, KEEP_ALIVE_MS);
      await waiting.value;
      clearTimeout(keepAlive);
    }
  }

  release(): void {
    Atomics.add(this.#cells, SERVING, 1);
    Atomics.notify(this.#cells, SERVING);
  }
}
