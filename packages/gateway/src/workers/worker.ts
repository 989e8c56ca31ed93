import type { Logger } from 'pino';
import { stallBoundMs, type LoopHealth, type LoopHeartbeat } from '../infrastructure/loop-health.ts';
import { LoopRunner } from './loop-runner.ts';

export interface PeriodicTask {
  /** The task's name in logs, and its loop's in /readyz and tms_worker_loop_last_round_age_seconds. */
  name: string;
  intervalMs: number;
  /**
   * The longest one step of a round may take: the work between two calls of progress() (one
   * platform call as a sender account, with its token wait), or 0 for a task that only uses the
   * store. With the interval it sets how long a round may go without progress before the loop
   * counts as stalled.
   */
  longestStepMs: number;
  /**
   * One round. A round that makes many platform calls reports each step done (`progress`), so a
   * long but moving round is not taken for a stalled one. `stopping` is aborted when the worker
   * stops: such a round then starts no more steps, finishes those in progress and ends, so a
   * SIGTERM waits for a few platform calls rather than a whole catch-up.
   */
  run(progress: () => void, stopping: AbortSignal): Promise<void>;
}

export interface WorkerHealth {
  loops: LoopHealth;
  clock: () => number;
}

/**
 * One task's loop, reported to loop health. Its age is that of the round in progress since its
 * last progress, and 0 between rounds: a task that runs once an hour is not stalled while it
 * waits for its next round, only when a round hangs (a store that stopped answering, a bug).
 * A round that fails has ended: the failure is logged and the round runs again after its pause.
 */
class PeriodicLoop {
  private readonly runner: LoopRunner;
  private readonly stopping = new AbortController();
  private progressAt: number | null = null;
  private heartbeat: LoopHeartbeat | null = null;

  constructor(
    private readonly task: PeriodicTask,
    log: Logger,
    private readonly health: WorkerHealth,
  ) {
    this.runner = new LoopRunner({
      round: () => this.round(),
      intervalMs: task.intervalMs,
      log,
      failure: { message: 'worker task failed', fields: { task: task.name } },
    });
  }

  start(): void {
    const { task, health } = this;
    this.heartbeat = health.loops.register(task.name, stallBoundMs(task.intervalMs, task.longestStepMs), (now) => (this.progressAt === null ? 0 : now - this.progressAt));
    this.runner.start();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.runner.stop();
    this.heartbeat?.stop();
  }

  private async round(): Promise<void> {
    const progress = (): void => {
      this.progressAt = this.health.clock();
    };
    progress();
    try {
      await this.task.run(progress, this.stopping.signal);
    } finally {
      this.progressAt = null;
    }
  }
}

/**
 * Runs periodic tasks until stopped, each in its own loop: first at once, then `intervalMs` after
 * each run ends, so a task never overlaps itself. stop() waits for the runs in flight so SIGTERM
 * never cuts a step of a task in half (a run of many steps ends after those in progress).
 */
export class Worker {
  private readonly loops: PeriodicLoop[];

  constructor(tasks: PeriodicTask[], log: Logger, health: WorkerHealth) {
    this.loops = tasks.map((task) => new PeriodicLoop(task, log, health));
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }
}
