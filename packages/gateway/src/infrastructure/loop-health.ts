/**
 * Whether the worker loops of this process are making progress. Every platform call and webhook
 * attempt has a deadline, so a loop that has not completed a round for much longer than its
 * interval plus those deadlines is stuck (a store that stopped answering, a bug), and the process
 * must say so: /readyz answers 503 and the age is exported as a metric.
 */

export interface LoopStatus {
  loop: string;
  /** How long since the loop last completed a round (or made progress); 0 when it has nothing to do. */
  ageMs: number;
  /** Beyond this age the loop counts as stalled. */
  boundMs: number;
}

/** A loop's side: report each completed round; stop() when the loop ends (a stopped loop is not stalled). */
export interface LoopHeartbeat {
  beat(): void;
  stop(): void;
}

interface Entry {
  boundMs: number;
  /** The loop's own measure of its age, for loops whose progress is not a round (work in flight). */
  ageMs: ((now: number) => number) | null;
  lastRoundAt: number;
}

export class LoopHealth {
  private readonly loops = new Map<string, Entry>();

  constructor(private readonly clock: () => number) {}

  /**
   * Registers a loop that completes rounds. `ageMs`, when given, replaces "time since the last
   * beat" (a loop that is idle with nothing in flight reports 0).
   */
  register(loop: string, boundMs: number, ageMs?: (now: number) => number): LoopHeartbeat {
    const entry: Entry = { boundMs, ageMs: ageMs ?? null, lastRoundAt: this.clock() };
    this.loops.set(loop, entry);
    return {
      beat: () => {
        entry.lastRoundAt = this.clock();
      },
      stop: () => {
        if (this.loops.get(loop) === entry) this.loops.delete(loop);
      },
    };
  }

  statuses(now: number = this.clock()): LoopStatus[] {
    return [...this.loops].map(([loop, entry]) => ({
      loop,
      ageMs: Math.max(0, entry.ageMs ? entry.ageMs(now) : now - entry.lastRoundAt),
      boundMs: entry.boundMs,
    }));
  }

  /** The loops that have not completed a round within their bound. */
  stalled(now: number = this.clock()): LoopStatus[] {
    return this.statuses(now).filter((status) => status.ageMs > status.boundMs);
  }
}

/**
 * The rule for a loop's bound: a few of its intervals plus twice the longest call a round waits
 * for (a platform call, a webhook attempt, the wait for another process's token refresh).
 */
export function stallBoundMs(intervalMs: number, longestCallMs: number): number {
  return 4 * intervalMs + 2 * longestCallMs;
}
