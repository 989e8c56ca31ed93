import type { Logger } from 'pino';
import type { MessageDispatcher } from '../services/dispatch.ts';

export interface DispatcherLoopSettings {
  /** Rounds running at once in this process: keeps the platform busy while a round records. */
  parallelRounds: number;
  /** Pause when nothing was due; scheduled messages go within this of their due time. */
  idlePollMs: number;
  /** How often expired claims are looked for. */
  reconcileEveryMs: number;
}

/**
 * The dispatch loop of `tms worker`: rounds back to back while there is work, a short pause when
 * there is none. stop() stops claiming and waits for the rounds in flight (graceful SIGTERM).
 */
export class DispatcherLoop {
  private stopped = false;
  private loops: Promise<void>[] = [];
  /** Wakes the loops sleeping between rounds, so stop() does not wait out a pause. */
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly dispatcher: MessageDispatcher,
    private readonly settings: DispatcherLoopSettings,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.loops = [...Array.from({ length: this.settings.parallelRounds }, () => this.run()), this.reconcile()];
  }

  /** Every few seconds: claims whose worker died are reconciled. */
  private async reconcile(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.dispatcher.reconcileExpiredClaims();
      } catch (error) {
        this.log.error({ err: error }, 'reconciling expired claims failed');
      }
      await this.pause(this.settings.reconcileEveryMs);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let claimed = 0;
      try {
        claimed = await this.dispatcher.dispatchRound();
      } catch (error) {
        this.log.error({ err: error }, 'dispatch round failed');
      }
      if (claimed < this.dispatcher.settings.batchSize && !this.stopped) await this.pause(this.settings.idlePollMs);
    }
  }

  private pause(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, delayMs);
      this.sleepers.add(wake);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.sleepers]) wake();
    await Promise.all(this.loops);
  }
}
