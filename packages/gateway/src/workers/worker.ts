import type { Logger } from 'pino';

export interface PeriodicTask {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

/**
 * Runs periodic tasks until stopped. A task never overlaps itself; stop() waits for the runs in
 * flight so SIGTERM never cuts a task in half.
 */
export class Worker {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly tasks: PeriodicTask[],
    private readonly log: Logger,
  ) {}

  start(): void {
    for (const task of this.tasks) this.schedule(task, 0);
  }

  private schedule(task: PeriodicTask, delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const run = task
        .run()
        .catch((error: unknown) => this.log.error({ err: error, task: task.name }, 'worker task failed'))
        .finally(() => {
          this.running.delete(run);
          this.schedule(task, task.intervalMs);
        });
      this.running.add(run);
    }, delayMs);
    this.timers.add(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.running]);
  }
}
