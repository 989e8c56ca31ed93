/**
 * One side of the write-lock test (write-lock.test.ts), run in its own thread: a connection to the
 * test's SQLite store that shares the test's WriteLock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { sql } from 'kysely';
import { openStore, runInTransaction } from '../../src/store/database.ts';
import { WriteLock } from '../../src/store/write-lock.ts';

const { file, lockBuffer, role, holdMs } = workerData as { file: string; lockBuffer: SharedArrayBuffer; role: 'holder' | 'waiter' | 'lone waiter'; holdMs: number };
const port = parentPort!;
const store = openStore({ kind: 'sqlite', file }, { writeLock: new WriteLock(lockBuffer) });

if (role === 'holder') {
  // Holds the write lock for holdMs inside a transaction, as a slow group commit would.
  await runInTransaction(store, async (trx) => {
    await sql`INSERT INTO writes (thread) VALUES ('holder')`.execute(trx);
    port.postMessage({ kind: 'holding' });
    await new Promise((resolve) => setTimeout(resolve, holdMs));
  });
  port.postMessage({ kind: 'done' });
} else if (role === 'lone waiter') {
  // Like the workers' thread of `tms start` while it starts: a write waiting for the lock is all the
  // thread has to do (no timer, no listener), and the thread must not end for want of work.
  port.postMessage({ kind: 'waiting' });
  await sql`INSERT INTO writes (thread) VALUES ('lone waiter')`.execute(store.db);
  port.postMessage({ kind: 'done' });
} else {
  port.once('message', async () => {
    // While its write waits, this thread's event loop must keep turning.
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    await sql`INSERT INTO writes (thread) VALUES ('waiter')`.execute(store.db);
    clearInterval(ticker);
    port.postMessage({ kind: 'done', ticks });
  });
  port.postMessage({ kind: 'ready' });
}
await new Promise((resolve) => port.once('close', resolve));
await store.close();
