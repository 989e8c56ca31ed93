import { sql } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnModuleThread } from '../../src/lib/module-thread.ts';
import { openStore } from '../../src/store/database.ts';
import { WriteLock } from '../../src/store/write-lock.ts';

interface Message {
  kind: 'ready' | 'holding' | 'waiting' | 'done';
  /** The waiter's timer ticks while its write waited. */
  ticks?: number;
}

/** A thread running write-lock-thread.ts through the same TypeScript loader as `tms start` from its sources. */
function startThread(data: { file: string; lockBuffer: SharedArrayBuffer; role: 'holder' | 'waiter' | 'lone waiter'; holdMs: number }): Worker {
  return spawnModuleThread(import.meta.url, 'write-lock-thread', data);
}

function nextMessage(thread: Worker, kind: Message['kind']): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Message): void => {
      if (message.kind !== kind) return;
      thread.off('message', onMessage);
      resolve(message);
    };
    thread.on('message', onMessage);
    thread.once('error', reject);
  });
}

/** A new store with one table, its directory added to `directories` for removal. */
async function createWritesTable(directories: string[]): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), 'tms-write-lock-'));
  directories.push(directory);
  const file = join(directory, 'store.sqlite');
  const setup = openStore({ kind: 'sqlite', file });
  await sql`CREATE TABLE writes (sequence integer PRIMARY KEY, thread text NOT NULL)`.execute(setup.db);
  await setup.close();
  return file;
}

describe('WriteLock: the SQLite write lock shared by the threads of one process', () => {
  const directories: string[] = [];
  const threads: Worker[] = [];
  afterEach(async () => {
    await Promise.all(threads.splice(0).map((thread) => thread.terminate()));
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('makes a thread that wants to write wait without stopping its event loop, then lets it write after the holder commits', async () => {
    const file = await createWritesTable(directories);
    const lock = new WriteLock();
    const holdMs = 400;
    const waiter = startThread({ file, lockBuffer: lock.buffer, role: 'waiter', holdMs });
    threads.push(waiter);
    await nextMessage(waiter, 'ready');
    const holder = startThread({ file, lockBuffer: lock.buffer, role: 'holder', holdMs });
    threads.push(holder);
    const holderDone = nextMessage(holder, 'done');
    await nextMessage(holder, 'holding');

    const waiterDone = nextMessage(waiter, 'done');
    waiter.postMessage('write');
    const [, waited] = await Promise.all([holderDone, waiterDone]);

    // SQLite's own busy handler would have slept on the waiter's thread for the whole hold: no tick.
    expect(waited.ticks).toBeGreaterThanOrEqual(5);
    const check = openStore({ kind: 'sqlite', file });
    const rows = await sql<{ thread: string }>`SELECT thread FROM writes ORDER BY sequence`.execute(check.db);
    await check.close();
    expect(rows.rows.map((row) => row.thread)).toEqual(['holder', 'waiter']);
  });

  it('keeps a thread whose only work is a write waiting for the lock alive until it gets the lock', async () => {
    const file = await createWritesTable(directories);
    const lock = new WriteLock();
    await lock.acquire();
    const waiter = startThread({ file, lockBuffer: lock.buffer, role: 'lone waiter', holdMs: 0 });
    threads.push(waiter);
    const exited = new Promise<string>((resolve) => waiter.once('exit', (code) => resolve(`the thread ended with code ${code} before it could write`)));
    await nextMessage(waiter, 'waiting');
    // Long enough for a thread with an empty event loop to end (Node.js ends it with code 13).
    await new Promise((resolve) => setTimeout(resolve, 300));
    lock.release();
    const outcome = await Promise.race([nextMessage(waiter, 'done').then(() => 'wrote'), exited]);
    expect(outcome).toBe('wrote');
  });

  it('serves the threads in the order they asked', async () => {
    const lock = new WriteLock();
    const sameLock = new WriteLock(lock.buffer);
    const order: string[] = [];
    await lock.acquire();
    const second = sameLock.acquire().then(() => order.push('second'));
    const third = lock.acquire().then(() => order.push('third'));
    lock.release();
    await second;
    sameLock.release();
    await third;
    lock.release();
    expect(order).toEqual(['second', 'third']);
  });
});
