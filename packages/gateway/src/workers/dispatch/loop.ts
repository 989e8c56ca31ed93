/**
 * The dispatch loop of `tms start` and `tms worker`. It claims due messages while it has room
 * (parallelRounds × the claim size) and works each sender account in its own lane, at most
 * `perAccountConcurrency` sends at once. A lane with twice that unsent or in flight (and never more
 * than half the room) is busy: the next claims skip its account, so a slow or failing account fills
 * only its own lane and every other account keeps being served. Outcomes are written in groups, a
 * commit for many sends, never waiting for the slowest send of a claim.
 *
 * An account whose send ended with an unknown outcome (written, no answer) is paused: its waiting
 * messages are given back unattempted, its messages are not claimed until the pause ends, and then
 * one send at a time probes the platform until one gets an answer. Each further unknown outcome
 * doubles the pause (up to a minute). This keeps the sends exposed to a frozen platform few.
 *
 * stop() (SIGTERM): stops claiming, gives back the messages not yet started, lets the sends in
 * flight finish (each is bounded by the platform deadline) and records everything.
 */
import type { Logger } from 'pino';
import type { LoopHealth } from '../../infrastructure/loop-health.ts';
import { ClaimLoop } from '../claim-loop.ts';
import { fillSlots, InFlight, type LaneSlots } from '../lane-slots.ts';
import { LoopRunner } from '../loop-runner.ts';
import type { ClaimedMessage, DispatchOutcome, MessageDispatcher } from './engine.ts';

export interface DispatcherLoopSettings {
  /** Claims' worth of messages this process holds at once: parallelRounds × the claim size. */
  parallelRounds: number;
  /** Pause when nothing was due; scheduled messages go within this of their due time. */
  idlePollMs: number;
  /** How often expired claims are looked for. */
  reconcileEveryMs: number;
  /** Stall bounds for readiness (infrastructure/loop-health.ts): claims, sends and the reconciler. */
  stallBounds?: { claimsMs: number; sendsMs: number; reconcileMs: number };
}

/** The longest an account is paused after repeated unknown outcomes. */
const MAX_ACCOUNT_PAUSE_MS = 60_000;
/**
 * How long a finished send's outcome may wait for others to share its write. Each write is a
 * commit (an fsync on SQLite): writing every few outcomes on their own costs far more than this
 * delay, which only postpones the `sent` record (the message is at the platform already).
 */
const RECORD_LINGER_MS = 100;
/** Group writes at once: on PostgreSQL one can commit while the next is being built. */
const CONCURRENT_GROUP_WRITES = 2;

/** One sender account's messages in this process. */
interface Lane extends LaneSlots<ClaimedMessage> {
  /** waiting + active + finished but not yet recorded. */
  held: number;
  /** No new sends before this (epoch ms); 0 when not paused. */
  pausedUntil: number;
  /** After a pause: one send at a time until one gets an answer. */
  probing: boolean;
  /** Unknown outcomes in a row: the pause doubles with each. */
  unknownStreak: number;
  /** A claim skipped this account: wake the claimer once the lane has room again. */
  skipped: boolean;
}

export class DispatcherLoop {
  private stopped = false;
  private readonly lanes = new Map<string, Lane>();
  private readonly sends = new InFlight();
  private pending: { oaId: string; outcome: DispatchOutcome }[] = [];
  /** Group writes in progress. */
  private readonly writes = new Set<Promise<void>>();
  private lingering: NodeJS.Timeout | null = null;
  /** Sends started and not finished, over all lanes. */
  private inFlight = 0;
  /** A skipped account finished a send with nothing left waiting: write its outcomes now. */
  private laneRunningDry = false;
  /** Claims messages while there is room (parallelRounds × the claim size); held work is the sends and their recording. */
  private readonly claims: ClaimLoop;
  /** Every few seconds: claims whose worker died, and unknown outcomes whose wait ended, are reconciled. */
  private readonly reconciler: LoopRunner;
  /** The last claim that found fewer messages than it asked for, and the accounts it skipped. */
  private lastShortClaim: { skipKey: string; at: number } | null = null;

  constructor(
    private readonly dispatcher: MessageDispatcher,
    private readonly settings: DispatcherLoopSettings,
    private readonly log: Logger,
    health: LoopHealth | null = null,
    private readonly clock: () => number = Date.now,
  ) {
    const bounds = health && settings.stallBounds ? { loops: health, ...settings.stallBounds } : null;
    const { batchSize } = dispatcher.settings;
    const reported = bounds && { loops: bounds.loops, claims: { loop: 'dispatch_claims', boundMs: bounds.claimsMs }, held: { loop: 'dispatch_sends', boundMs: bounds.sendsMs } };
    const sizes = { capacity: settings.parallelRounds * batchSize, batchSize, idlePollMs: settings.idlePollMs };
    this.claims = new ClaimLoop(sizes, (limit) => this.claim(limit), { failureMessage: 'claiming messages to dispatch failed', log, clock, health: reported });
    this.reconciler = new LoopRunner({
      round: () => dispatcher.reconcileExpiredClaims(),
      intervalMs: settings.reconcileEveryMs,
      log,
      failure: { message: 'reconciling expired claims failed' },
      health: bounds && { loops: bounds.loops, loop: 'dispatch_reconcile', boundMs: bounds.reconcileMs },
    });
  }

  private get capacity(): number {
    return this.settings.parallelRounds * this.dispatcher.settings.batchSize;
  }

  private limitOf(lane: Lane): number {
    return lane.probing ? 1 : this.dispatcher.settings.perAccountConcurrency;
  }

  /** Messages of the account not sent yet or in flight (finished ones only wait for their write). */
  private unfinished(lane: Lane): number {
    return lane.waiting.length + lane.active;
  }

  /**
   * With this many unfinished, an account is skipped by claims: a wave in flight and one waiting,
   * and never more than half of what the process may hold (parallel rounds × claim size). A stuck
   * account holds at most that plus one claim; the other accounts keep the rest.
   */
  private busyLevel(lane: Lane): number {
    return Math.max(1, Math.min(2 * this.limitOf(lane), Math.floor(this.capacity / 2)));
  }

  start(): void {
    this.claims.start();
    this.reconciler.start();
  }

  /** The accounts the next claim leaves alone: paused, or holding a wave beyond what they may send at once. */
  private skippedAccounts(now: number): string[] {
    const skipped: string[] = [];
    for (const [oaId, lane] of this.lanes) {
      if (lane.pausedUntil <= now && this.unfinished(lane) < this.busyLevel(lane)) continue;
      lane.skipped = true;
      skipped.push(oaId);
    }
    return skipped;
  }

  /** One claim of up to `limit` messages; resolves to the pause before the next. */
  private async claim(limit: number): Promise<number | void> {
    const now = this.clock();
    const skipped = this.skippedAccounts(now);
    const skipKey = skipped.sort().join(',');
    const lastShort = this.lastShortClaim;
    if (skipped.length > 0 && lastShort?.skipKey === skipKey && now - lastShort.at < this.settings.idlePollMs) {
      // The same accounts were skipped a moment ago and nothing else was due: the claim would
      // only walk past the skipped accounts' rows again. New messages wait at most a poll, as ever.
      return this.settings.idlePollMs - (now - lastShort.at);
    }
    const claimed = await this.dispatcher.claim(limit, skipped);
    if (claimed.length < limit) this.lastShortClaim = { skipKey, at: now };
    // Claimed while stop() began: the lanes give them back.
    for (const message of claimed) this.enqueue(message);
    return claimed.length < limit ? this.settings.idlePollMs : 0;
  }

  private enqueue(message: ClaimedMessage): void {
    let lane = this.lanes.get(message.oa_id);
    if (!lane) {
      lane = { waiting: [], active: 0, held: 0, pausedUntil: 0, probing: false, unknownStreak: 0, skipped: false };
      this.lanes.set(message.oa_id, lane);
    }
    this.claims.hold();
    lane.held += 1;
    lane.waiting.push(message);
    this.pump(message.oa_id, lane);
  }

  private pump(oaId: string, lane: Lane): void {
    if (this.stopped || lane.pausedUntil > this.clock()) {
      // Not sent now: back to the queue, due when the pause ends (or at once for another worker).
      const dueAt = this.stopped ? 0 : lane.pausedUntil;
      for (const message of lane.waiting.splice(0)) this.submit(oaId, { kind: 'released', message, dueAt: Math.max(dueAt, message.due_at) });
      return;
    }
    fillSlots(lane, this.limitOf(lane), this.sends, (message) => {
      this.inFlight += 1;
      return this.sendOne(oaId, lane, message);
    });
  }

  private async sendOne(oaId: string, lane: Lane, message: ClaimedMessage): Promise<void> {
    let outcome: DispatchOutcome;
    try {
      outcome = await this.dispatcher.send(message);
    } catch (error) {
      // send() does not throw; if it ever did, nothing says the request did not go out.
      this.log.error({ err: error, msg_id: message.id }, 'dispatching a message failed unexpectedly');
      outcome = { kind: 'unconfirmed', message, waitUntil: this.clock() + this.dispatcher.settings.unconfirmedGraceMs };
    }
    lane.active -= 1;
    this.inFlight -= 1;
    this.noteOutcome(lane, outcome);
    this.submit(oaId, outcome);
    this.pump(oaId, lane);
    this.wakeIfFreed(lane);
  }

  /** Pauses the account after an unknown outcome; any answer ends a probe. */
  private noteOutcome(lane: Lane, outcome: DispatchOutcome): void {
    if (outcome.kind === 'released') return;
    if (outcome.kind !== 'unconfirmed') {
      lane.probing = false;
      lane.unknownStreak = 0;
      return;
    }
    lane.unknownStreak += 1;
    const pauseMs = Math.min(MAX_ACCOUNT_PAUSE_MS, this.dispatcher.settings.backoffBaseMs * 2 ** Math.min(lane.unknownStreak - 1, 16));
    lane.pausedUntil = Math.max(lane.pausedUntil, this.clock() + pauseMs);
    lane.probing = true;
  }

  /** Queues an outcome for the next group write. */
  private submit(oaId: string, outcome: DispatchOutcome): void {
    this.pending.push({ oaId, outcome });
    const lane = this.lanes.get(oaId);
    if (lane && lane.skipped && lane.waiting.length === 0) this.laneRunningDry = true;
    this.scheduleRecording();
  }

  /**
   * A group is written once it is a claim's worth, once no send is left to join it, once an
   * account that claims skip has nothing left waiting (its finished messages must leave its lane
   * for it to get more before its sends run dry), or after a short linger.
   */
  private groupReady(): boolean {
    return this.stopped || this.inFlight === 0 || this.laneRunningDry || this.pending.length >= this.dispatcher.settings.batchSize;
  }

  private scheduleRecording(): void {
    if (this.pending.length === 0) return;
    // Enough writes in progress: the next one to finish takes what is pending.
    if (this.writes.size >= CONCURRENT_GROUP_WRITES) return;
    if (this.groupReady()) {
      this.writeGroup();
      return;
    }
    this.lingering ??= setTimeout(() => {
      this.lingering = null;
      if (this.writes.size < CONCURRENT_GROUP_WRITES && this.pending.length > 0) this.writeGroup();
    }, RECORD_LINGER_MS);
  }

  /** Writes everything pending as one group; its messages leave their lanes once it is written. */
  private writeGroup(): void {
    if (this.lingering) {
      clearTimeout(this.lingering);
      this.lingering = null;
    }
    const group = this.pending;
    this.pending = [];
    this.laneRunningDry = false;
    const write = this.dispatcher
      .record(group.map((entry) => entry.outcome))
      .catch((error: unknown) => {
        // The claims stay sending: the reconciler treats them as a dead worker's when their lease ends.
        this.log.error({ err: error, count: group.length }, 'recording dispatch outcomes failed; the reconciler takes these claims over');
      })
      .then(() => {
        for (const entry of group) this.settle(entry.oaId);
      })
      .finally(() => {
        this.writes.delete(write);
        this.scheduleRecording();
      });
    this.writes.add(write);
  }

  /** A message left the lane (recorded or given back): free its room and wake the claimer if it waits for it. */
  private settle(oaId: string): void {
    const lane = this.lanes.get(oaId);
    if (!lane) return;
    lane.held -= 1;
    if (lane.held === 0 && !lane.probing && lane.pausedUntil <= this.clock()) this.lanes.delete(oaId);
    this.claims.settle(1);
  }

  /**
   * A skipped account has room again: claim for it without waiting out the pause. This happens as
   * soon as its unfinished messages fall below its busy level (not once its outcomes are written),
   * and a claim brings up to a claim's worth, so its sends do not run dry while a wave is written.
   */
  private wakeIfFreed(lane: Lane): void {
    if (!lane.skipped || this.unfinished(lane) >= this.busyLevel(lane) || lane.pausedUntil > this.clock()) return;
    lane.skipped = false;
    this.claims.wake();
  }

  /** Graceful stop: resolves when every message this process held is recorded or given back. */
  async stop(): Promise<void> {
    this.stopped = true;
    const reconcilerStopped = this.reconciler.stop();
    await this.claims.stopClaiming();
    for (const [oaId, lane] of this.lanes) this.pump(oaId, lane);
    await this.sends.settled();
    this.scheduleRecording();
    while (this.writes.size > 0) await Promise.all([...this.writes]);
    await reconcilerStopped;
    this.claims.stopReporting();
  }
}
