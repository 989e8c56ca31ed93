/**
 * The workers' thread of `tms start` (see worker-thread.ts): a runtime of its own on the same
 * store, running only the worker loops, answering its parent's requests for metrics and stop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { WriteLock } from '../store/write-lock.ts';
import { LogOutput } from './log-output.ts';
import { createRuntime } from './runtime.ts';
import { startService } from './server.ts';
import type { FromWorkerThread, ToWorkerThread, WorkerThreadData } from './worker-thread.ts';

/** How long stopping waits for queued log lines. */
const LOG_FLUSH_MS = 2000;
/** How long the stopped thread waits for its event loop to empty before it ends anyway. */
const LEFTOVER_HANDLES_GRACE_MS = 1000;

const port = parentPort;
if (!port) throw new Error('worker-thread-main runs only as a worker thread of `tms start`');
const data = workerData as WorkerThreadData;
// Structured cloning turned the master keys' Buffers into plain Uint8Arrays.
const asBuffer = (key: Uint8Array | null): Buffer | null => (key ? Buffer.from(key) : null);
const config = { ...data.config, masterKey: asBuffer(data.config.masterKey), previousMasterKey: asBuffer(data.config.previousMasterKey) };
const output = new LogOutput();
const log = pino({ level: config.logLevel }, output).child({ thread: 'workers' });
const runtime = await createRuntime(config, {
  log,
  writeLock: data.writeLockBuffer ? new WriteLock(data.writeLockBuffer) : undefined,
  // The process's WAL checkpoints, between the workers' own tasks: a round takes a few
  // milliseconds twice a second, and a thread of their own would cost about 15 MB.
  walCheckpoints: 'this-thread',
  // The workers' event loop also reads the platform's and the receivers' answers: their fsyncs wait
  // on libuv's pool. On the event loop they made the full loop no faster (README, Benchmarks).
  walFsyncs: 'thread-pool',
  processWideMetrics: false,
});
const post = (message: FromWorkerThread): void => port.postMessage(message);

port.on('message', (message: ToWorkerThread) => {
  if (message.kind === 'begin') {
    void startService(runtime, { api: false, worker: true }).then(
      () => post({ kind: 'running' }),
      (error: unknown) => {
        // Ending the thread ends the process (its parent's onFailure), as a crashed worker would.
        log.error({ err: error }, "the workers' loops failed to start");
        void output.flush(LOG_FLUSH_MS).finally(() => process.exit(1));
      },
    );
    return;
  }
  if (message.kind === 'report') {
    void runtime.metrics.report().then((report) => post({ kind: 'report', id: message.id, report }));
    return;
  }
  // Closing the runtime stops the loops it owns; stopped before it began, no loop ever claimed anything.
  void runtime
    .close()
    .catch((error: unknown) => log.error({ err: error }, "stopping the workers' thread failed"))
    .then(() => output.flush(LOG_FLUSH_MS))
    .then(() => {
      // With the port closed and everything stopped, the thread's event loop empties and it ends;
      // a timer some library left behind must not keep it (and the process's exit) waiting.
      port.close();
      setTimeout(() => process.exit(0), LEFTOVER_HANDLES_GRACE_MS).unref();
    });
});
post({ kind: 'loaded' });
