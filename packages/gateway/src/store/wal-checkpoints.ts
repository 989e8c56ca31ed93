/**
 * Copies SQLite's write-ahead log into the database file off the API's event loop: from a thread of
 * its own, or (`tms start`) between the tasks of the workers' thread.
 *
 * By default SQLite checkpoints inside the commit that makes the log pass 1,000 pages: that commit
 * then copies the pages and fsyncs the database file on the committing thread, which holds its
 * event loop for several milliseconds, a few times a second under load. Serving stores turn that
 * off and these rounds checkpoint instead, every CHECKPOINT_INTERVAL_MS. Each round copies the log
 * while writers go on (PASSIVE), then, holding the process's write lock so that no writer appends
 * meanwhile, copies what they appended and waits for readers to leave the log (RESTART): the next
 * write then starts the log over from its beginning, so the file stays bounded under constant load.
 * A page written many times between two rounds is copied once.
 */
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { spawnModuleThread } from '../lib/module-thread.ts';
import { CheckpointRounds } from './wal-checkpoint-rounds.ts';
import type { WriteLock } from './write-lock.ts';

/**
 * The thread runs one PRAGMA a round and allocates almost nothing: V8's default young generation
 * (two 16 MB semi-spaces once grown) would only be room for garbage.
 */
const CHECKPOINT_THREAD_HEAP: ResourceLimits = { maxYoungGenerationSizeMb: 3 };

/** How often a round runs: the log holds about this much of the writes (a few MB at full load). */
const CHECKPOINT_INTERVAL_MS = 500;

/** What the checkpoint thread is started with. */
export interface CheckpointThreadData {
  file: string;
  writeLockBuffer: SharedArrayBuffer;
  intervalMs: number;
}
export type ToCheckpointThread = { kind: 'stop' };
export type FromCheckpointThread = { kind: 'failed'; message: string };

export interface WalCheckpoints {
  /** Lets the round in progress finish, then closes the thread's connection and ends it. */
  stop(): Promise<void>;
}

/** Starts the checkpoint thread of the database `file`; `onFailure` hears of each failed round (the next round tries again). */
export function startWalCheckpoints(file: string, writeLock: WriteLock, onFailure: (error: Error) => void): WalCheckpoints {
  const data: CheckpointThreadData = { file, writeLockBuffer: writeLock.buffer, intervalMs: CHECKPOINT_INTERVAL_MS };
  const thread: Worker = spawnModuleThread(import.meta.url, 'wal-checkpoint-thread', data, CHECKPOINT_THREAD_HEAP);
  // It never keeps a process alive by itself: a checkpoint cut short by the exit is safe (SQLite finishes it later).
  thread.unref();
  const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
  thread.on('message', (message: FromCheckpointThread) => onFailure(new Error(`WAL checkpoint failed: ${message.message}`)));
  thread.on('error', (error) => onFailure(error));
  return {
    stop: async () => {
      // Referenced again while it finishes: a process with nothing else left must wait for it.
      thread.ref();
      thread.postMessage({ kind: 'stop' } satisfies ToCheckpointThread);
      await exited;
    },
  };
}

/**
 * Runs the rounds on this thread's event loop instead of a thread of their own: for a thread with
 * room in its event loop (the workers' thread of `tms start`), which saves the process the memory
 * of one more thread (a V8 heap and a Node.js environment, about 15 MB).
 */
export function runWalCheckpointsHere(file: string, writeLock: WriteLock, onFailure: (error: Error) => void): WalCheckpoints {
  const rounds = new CheckpointRounds(file, writeLock, CHECKPOINT_INTERVAL_MS, (error) => onFailure(new Error(`WAL checkpoint failed: ${error.message}`)));
  rounds.start();
  return { stop: () => rounds.stop() };
}
