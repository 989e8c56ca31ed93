import type { Logger } from 'pino';
import { LoopRunner } from './loop-runner.ts';

export interface PeriodicTask {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

/**
 * Runs periodic tasks until stopped, each in its own loop: first at once, then `intervalMs` after
 * each run ends, so a task never overlaps itself. stop() waits for the runs in flight so SIGTERM
 * never cuts a task in half.
 */
export class Worker {
  private readonly loops: LoopRunner[];

  constructor(tasks: PeriodicTask[], log: Logger) {
    this.loops = tasks.map(
      (task) =>
        new LoopRunner({
          round: () => task.run(),
          intervalMs: task.intervalMs,
          log,
          failure: { message: 'worker task failed', fields: { task: task.name } },
        }),
    );
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }
}
