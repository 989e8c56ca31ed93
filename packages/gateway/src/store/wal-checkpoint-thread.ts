/** The WAL checkpoint thread (see wal-checkpoints.ts): its own connection, one round per interval. */
import { parentPort, workerData } from 'node:worker_threads';
import { CheckpointRounds } from './wal-checkpoint-rounds.ts';
import type { CheckpointThreadData, FromCheckpointThread, ToCheckpointThread } from './wal-checkpoints.ts';
import { WriteLock } from './write-lock.ts';

const port = parentPort;
if (!port) throw new Error('wal-checkpoint-thread runs only as a worker thread');
const data = workerData as CheckpointThreadData;
const rounds = new CheckpointRounds(data.file, new WriteLock(data.writeLockBuffer), data.intervalMs, (error) =>
  port.postMessage({ kind: 'failed', message: error.message } satisfies FromCheckpointThread),
);

port.on('message', (message: ToCheckpointThread) => {
  if (message.kind !== 'stop') return;
  void rounds.stop().then(() => port.close());
});
rounds.start();
