/**
 * Runs one worker loop: rounds one after another with a pause between them. Work arriving can
 * end a pause early (wake) and stopping ends it at once; stop() resolves once the round in
 * progress has finished, so a stop never cuts a round in half. A failed round is logged and the
 * loop pauses longer after each failure in a row. When given loop health, the loop is registered
 * while it runs and every round that completes counts as progress.
 */
import type { Logger } from 'pino';
import type { LoopHealth, LoopHeartbeat } from '../infrastructure/loop-health.ts';

/** The longest pause after failures in a row, unless the loop's own interval is longer. */
const MAX_FAILURE_PAUSE_MS = 5000;

/** A loop as loop health knows it: its name and stall bound. */
export interface ReportedLoop {
  loop: string;
  boundMs: number;
}

export interface LoopRunnerOptions {
  /**
   * One round. Resolves to the pause before the next round: 0 for at once, nothing for the
   * loop's interval.
   */
  round(): Promise<number | void>;
  /** The pause after a round that names none, and the first pause after a failure. */
  intervalMs: number;
  log: Logger;
  /** What a failed round is logged as, and the fields that go with it. */
  failure: { message: string; fields?: Record<string, unknown> };
  /** The name and stall bound under which the loop reports its rounds (infrastructure/loop-health.ts). */
  health?: ({ loops: LoopHealth } & ReportedLoop) | null;
}

export class LoopRunner {
  private stopping = false;
  private running: Promise<void> | null = null;
  private endPause: (() => void) | null = null;
  /** A wake-up that came while no pause was in progress: the next pause ends at once. */
  private wokenEarly = false;
  private failuresInARow = 0;
  private heartbeat: LoopHeartbeat | null = null;

  constructor(private readonly options: LoopRunnerOptions) {}

  start(): void {
    const { health } = this.options;
    if (health) this.heartbeat = health.loops.register(health.loop, health.boundMs);
    this.running = this.run();
  }

  /** Ends the current pause now (or the next one, when a round is in progress). */
  wake(): void {
    if (this.endPause) this.endPause();
    else this.wokenEarly = true;
  }

  /** No more rounds; resolves once the round in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.endPause?.();
    await this.running;
    this.heartbeat?.stop();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const pauseMs = await this.runRound();
      if (!this.stopping && pauseMs > 0) await this.pause(pauseMs);
    }
  }

  private async runRound(): Promise<number> {
    const { intervalMs } = this.options;
    try {
      const pauseMs = await this.options.round();
      this.failuresInARow = 0;
      this.heartbeat?.beat();
      return pauseMs ?? intervalMs;
    } catch (error) {
      this.failuresInARow += 1;
      this.options.log.error({ err: error, ...this.options.failure.fields }, this.options.failure.message);
      // A store or platform that keeps failing is asked less and less often, and logged less.
      const backoffMs = intervalMs * 2 ** Math.min(this.failuresInARow - 1, 16);
      return Math.min(backoffMs, Math.max(intervalMs, MAX_FAILURE_PAUSE_MS));
    }
  }

  private pause(delayMs: number): Promise<void> {
    if (this.wokenEarly) {
      this.wokenEarly = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const end = (): void => {
        clearTimeout(timer);
        this.endPause = null;
        resolve();
      };
      const timer = setTimeout(end, delayMs);
      this.endPause = end;
    });
  }
}
