import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/config.ts';
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
export type ToWorkerThread = { kind: 'begin' } | { kind: 'report'; id: number } | { kind: 'stop' };
/** From the workers' thread back: `loaded` once its runtime is open, `running` once its loops run. */
export type FromWorkerThread = { kind: 'loaded' } | { kind: 'running' } | { kind: 'report'; id: number; report: ThreadReport };

const isOutOfMemory = (error: Error): boolean => (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY';

/** How long /metrics and /readyz wait for the workers' thread: an event loop that cannot answer this fast is stuck. */
const REPORT_TIMEOUT_MS = 2000;

/**
 * The workers' thread's young generation, in MB: two 8 MB semi-spaces and room for large new objects.
 * V8's default is twice that, held for good once a busy moment has grown it; the workers' objects
 * live for one round of a claim, which 8 MB holds many times over.
 */
const WORKERS_YOUNG_GENERATION_MB = 24;

/** The workers of `tms start`, running in their own thread: stopped with the runtime, and reporting to its metrics. */
export interface WorkerThread extends Stoppable, MetricsPeer {
  /** Starts the loops; resolves once they run. Stopped before, the thread claims nothing. */
  begin(): Promise<void>;
}

/**
 * Loads the worker loops (dispatch, webhooks, periodic tasks) of `tms start` in a second thread
 * with its own store connection, so the API's event loop and the workers' each have a core.
 * Resolves once the thread's runtime is open; its loops wait for begin(), so the thread loads
 * while the API builds, yet claims nothing before the API holds its port. `onFailure` is called
 * if the thread ends other than by stop(): the process must then end too, as a crashed worker
 * process would, and is recovered the same way.
 */
export async function loadWorkerThread(options: { config: Config; writeLock: WriteLock | null; log: Logger; onFailure: (error: Error) => void }): Promise<WorkerThread> {
  const data: WorkerThreadData = { config: options.config, writeLockBuffer: options.writeLock?.buffer ?? null };
  // Without a limit V8 sizes a thread's heap from the machine's memory and lets garbage build up to
  // several times what the workers hold (README, Memory); with one it collects sooner.
  const heapLimit = options.config.workerThreadHeapMb > 0 ? { maxOldGenerationSizeMb: options.config.workerThreadHeapMb, maxYoungGenerationSizeMb: WORKERS_YOUNG_GENERATION_MB } : undefined;
  const worker = spawnModuleThread(import.meta.url, 'worker-thread-main', data, heapLimit);
  const pendingReports = new Map<number, (report: ThreadReport) => void>();
  let nextReportId = 0;
  let stopping = false;

  await new Promise<void>((resolve, reject) => {
    const failedToStart = (error: Error): void =>
      reject(isOutOfMemory(error) ? new ConfigError('TMS_WORKER_THREAD_HEAP_MB', `${options.config.workerThreadHeapMb} MB is too little for the workers' thread to start: raise it, or set 0 for V8's own limit`) : error);
    const exitedBeforeReady = (code: number): void => reject(new Error(`the workers' thread exited with code ${code} while starting`));
    worker.once('error', failedToStart);
    worker.once('exit', exitedBeforeReady);
    worker.once('message', (message: FromWorkerThread) => {
      if (message.kind !== 'loaded') return;
      worker.off('error', failedToStart);
      worker.off('exit', exitedBeforeReady);
      resolve();
    });
  });

  let markRunning: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (markRunning = resolve));
  worker.on('message', (message: FromWorkerThread) => {
    if (message.kind === 'running') markRunning();
    if (message.kind !== 'report') return;
    pendingReports.get(message.id)?.(message.report);
    pendingReports.delete(message.id);
  });
  worker.on('error', (error) => {
    const what = isOutOfMemory(error) ? `the workers' thread ran out of memory (TMS_WORKER_THREAD_HEAP_MB=${options.config.workerThreadHeapMb})` : "the workers' thread failed";
    options.log.error({ err: error }, what);
    if (!stopping) options.onFailure(error);
  });
  worker.on('exit', (code) => {
    if (!stopping) options.onFailure(new Error(`the workers' thread exited with code ${code}`));
  });

  const post = (message: ToWorkerThread): void => worker.postMessage(message);
  return {
    begin: () => {
      // A stop (SIGTERM during start-up) may come first: the thread then never starts its loops.
      if (stopping) return Promise.resolve();
      post({ kind: 'begin' });
      return running;
    },
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
