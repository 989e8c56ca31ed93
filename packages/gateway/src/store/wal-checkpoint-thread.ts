/** The WAL checkpoint thread (see wal-checkpoints.ts): its own connection, one round per interval. */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteDatabase } from './sqlite-driver.ts';
import type { CheckpointThreadData, FromCheckpointThread, ToCheckpointThread } from './wal-checkpoints.ts';
import { WriteLock } from './write-lock.ts';

/**
 * How long the holding phase waits for another process's writer or a reader still in the log.
 * It holds this process's writers meanwhile, so it gives up soon and tries again next round.
 */
const HOLDING_BUSY_TIMEOUT_MS = 100;

const port = parentPort;
if (!port) throw new Error('wal-checkpoint-thread runs only as a worker thread');
const data = workerData as CheckpointThreadData;
const connection = openSqliteDatabase(data.file);
connection.pragma(`busy_timeout = ${HOLDING_BUSY_TIMEOUT_MS}`);
const writeLock = new WriteLock(data.writeLockBuffer);

async function checkpointRound(): Promise<void> {
  connection.pragma('wal_checkpoint(PASSIVE)');
  await writeLock.acquire();
  try {
    connection.pragma('wal_checkpoint(RESTART)');
  } finally {
    writeLock.release();
  }
}

let stopping = false;
let timer: NodeJS.Timeout | undefined;
let round: Promise<void> = Promise.resolve();

function scheduleRound(): void {
  timer = setTimeout(() => {
    round = checkpointRound()
      .catch((error: unknown) => port?.postMessage({ kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies FromCheckpointThread))
      .finally(() => {
        if (!stopping) scheduleRound();
      });
  }, data.intervalMs);
}

port.on('message', (message: ToCheckpointThread) => {
  if (message.kind !== 'stop') return;
  stopping = true;
  clearTimeout(timer);
  void round.then(() => {
    connection.close();
    port.close();
  });
});
scheduleRound();
