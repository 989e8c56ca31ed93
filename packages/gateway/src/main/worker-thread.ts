import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { spawnModuleThread } from '../lib/module-thread.ts';
import type { MetricsPeer, ThreadReport } from '../infrastructure/metrics.ts';
import type { WriteLock } from '../store/write-lock.ts';
import type { Stoppable } from './runtime.ts';

/** What the workers' thread is started with (structured-cloned: a Buffer arrives as a Uint8Array). */
export interface WorkerThreadData {
  config: Config;
  /** The SQLite write lock's shared cells; null on PostgreSQL. */
  writeLockBuffer: SharedArrayBuffer | null;
}

/** From this thread to the workers' thread. */
export type ToWorkerThread = { kind: 'report'; id: number } | { kind: 'stop' };
/** From the workers' thread back. */
export type FromWorkerThread = { kind: 'ready' } | { kind: 'report'; id: number; report: ThreadReport };

/** How long /metrics and /readyz wait for the workers' thread: an event loop that cannot answer this fast is stuck. */
const REPORT_TIMEOUT_MS = 2000;

/** The workers of `tms start`, running in their own thread: stopped with the runtime, and reporting to its metrics. */
export interface WorkerThread extends Stoppable, MetricsPeer {}

/**
 * Starts the worker loops (dispatch, webhooks, periodic tasks) of `tms start` in a second thread
 * with its own store connection, so the API's event loop and the workers' each have a core.
 * Resolves once the loops run. `onFailure` is called if the thread ends other than by stop():
 * the process must then end too, as a crashed worker process would, and is recovered the same way.
 */
export async function startWorkerThread(options: { config: Config; writeLock: WriteLock | null; log: Logger; onFailure: (error: Error) => void }): Promise<WorkerThread> {
  const data: WorkerThreadData = { config: options.config, writeLockBuffer: options.writeLock?.buffer ?? null };
  const worker = spawnModuleThread(import.meta.url, 'worker-thread-main', data);
  const pendingReports = new Map<number, (report: ThreadReport) => void>();
  let nextReportId = 0;
  let stopping = false;

  await new Promise<void>((resolve, reject) => {
    const failedToStart = (error: Error): void => reject(error);
    const exitedBeforeReady = (code: number): void => reject(new Error(`the workers' thread exited with code ${code} while starting`));
    worker.once('error', failedToStart);
    worker.once('exit', exitedBeforeReady);
    worker.once('message', (message: FromWorkerThread) => {
      if (message.kind !== 'ready') return;
      worker.off('error', failedToStart);
      worker.off('exit', exitedBeforeReady);
      resolve();
    });
  });

  worker.on('message', (message: FromWorkerThread) => {
    if (message.kind !== 'report') return;
    pendingReports.get(message.id)?.(message.report);
    pendingReports.delete(message.id);
  });
  worker.on('error', (error) => {
    options.log.error({ err: error }, "the workers' thread failed");
    if (!stopping) options.onFailure(error);
  });
  worker.on('exit', (code) => {
    if (!stopping) options.onFailure(new Error(`the workers' thread exited with code ${code}`));
  });

  const post = (message: ToWorkerThread): void => worker.postMessage(message);
  return {
    report: () =>
      new Promise<ThreadReport>((resolve, reject) => {
        const id = nextReportId++;
        const timer = setTimeout(() => {
          pendingReports.delete(id);
          reject(new Error(`no answer within ${REPORT_TIMEOUT_MS} ms`));
        }, REPORT_TIMEOUT_MS);
        pendingReports.set(id, (report) => {
          clearTimeout(timer);
          resolve(report);
        });
        post({ kind: 'report', id });
      }),
    stop: async () => {
      if (stopping) return;
      stopping = true;
      // The thread stops its loops, commits what they hold, closes its store and then ends by
      // itself. It is never terminated from here: a thread cut off while queued for the SQLite
      // write lock would leave its turn unused, and every later write of this process would wait.
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      post({ kind: 'stop' });
      await exited;
    },
  };
}
