/**
 * The claiming side of a queue's worker loop (dispatch, webhooks): claims while the process has
 * room, and counts what it holds (claimed, not yet recorded or given back). Claims are not made one
 * slot at a time: with less room than a tenth of the capacity (up to a claim) it waits, and a
 * settled item that makes that room wakes it. For readiness it reports two loops: its claims (every
 * claim round that completes) and its held work (stalled when work is held and none has moved).
 */
import type { Logger } from 'pino';
import type { LoopHealth, LoopHeartbeat } from '../infrastructure/loop-health.ts';
import { LoopRunner, type ReportedLoop } from './loop-runner.ts';

export interface ClaimSizes {
  /** What the process may hold at once. */
  capacity: number;
  /** Most items per claim. */
  batchSize: number;
  /** The pause when there is no room, or when a claim found less than it asked for. */
  idlePollMs: number;
}

/**
 * Claims up to `limit` items and takes them in (hold()); resolves to the pause before the next
 * claim, as a LoopRunner round does.
 */
export type Claim = (limit: number) => Promise<number | void>;

export interface ClaimReporting {
  /** What a failed claim is logged as. */
  failureMessage: string;
  log: Logger;
  clock: () => number;
  health: { loops: LoopHealth; claims: ReportedLoop; held: ReportedLoop } | null;
}

export class ClaimLoop {
  private heldCount = 0;
  /** When held work last moved (an item settled), or when there was none. */
  private lastProgressAt: number;
  private waitingForRoom = false;
  private readonly runner: LoopRunner;
  private heldBeat: LoopHeartbeat | null = null;

  constructor(
    private readonly sizes: ClaimSizes,
    private readonly claim: Claim,
    private readonly reporting: ClaimReporting,
  ) {
    this.lastProgressAt = reporting.clock();
    const { health } = reporting;
    this.runner = new LoopRunner({
      round: () => this.round(),
      intervalMs: sizes.idlePollMs,
      log: reporting.log,
      failure: { message: reporting.failureMessage },
      health: health && { loops: health.loops, ...health.claims },
    });
  }

  get held(): number {
    return this.heldCount;
  }

  private get minimumClaim(): number {
    return Math.max(1, Math.min(this.sizes.batchSize, Math.floor(this.sizes.capacity / 10)));
  }

  start(): void {
    this.runner.start();
    const { health } = this.reporting;
    if (health) this.heldBeat = health.loops.register(health.held.loop, health.held.boundMs, (now) => (this.heldCount > 0 ? now - this.lastProgressAt : 0));
  }

  private async round(): Promise<number | void> {
    this.waitingForRoom = false;
    const room = this.sizes.capacity - this.heldCount;
    if (room < this.minimumClaim) {
      this.waitingForRoom = true;
      return;
    }
    return this.claim(Math.min(room, this.sizes.batchSize));
  }

  /** An item was claimed. */
  hold(): void {
    if (this.heldCount === 0) this.lastProgressAt = this.reporting.clock();
    this.heldCount += 1;
  }

  /**
   * Items left (recorded or given back): their room is free again. `laneFreed`: a lane that claims
   * skipped has room again, so claim without waiting out the pause.
   */
  settle(count: number, laneFreed = false): void {
    if (count > 0) {
      this.heldCount -= count;
      this.lastProgressAt = this.reporting.clock();
    }
    const roomFreed = this.waitingForRoom && this.sizes.capacity - this.heldCount >= this.minimumClaim;
    if (laneFreed || roomFreed) this.runner.wake();
  }

  /** Claim again without waiting out the pause (a busy lane has room again). */
  wake(): void {
    this.runner.wake();
  }

  /** No more claims; resolves once a claim in progress has taken its items in. */
  stopClaiming(): Promise<void> {
    return this.runner.stop();
  }

  /** The held work is all settled: the loop leaves loop health. */
  stopReporting(): void {
    this.heldBeat?.stop();
  }
}
