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
import type { ClaimedMessage, DispatchOutcome, MessageDispatcher } from '../services/dispatch.ts';
import type { LoopHealth, LoopHeartbeat } from '../services/loop-health.ts';

export interface DispatcherLoopSettings {
  /** Claims' worth of messages this process holds at once: parallelRounds × the claim size. */
  parallelRounds: number;
  /** Pause when nothing was due; scheduled messages go within this of their due time. */
  idlePollMs: number;
  /** How often expired claims are looked for. */
  reconcileEveryMs: number;
  /** Stall bounds for readiness (services/loop-health.ts): claims, sends and the reconciler. */
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
interface Lane {
  readonly waiting: ClaimedMessage[];
  active: number;
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
  private held = 0;
  private readonly lanes = new Map<string, Lane>();
  private readonly sends = new Set<Promise<void>>();
  private pending: { oaId: string; outcome: DispatchOutcome }[] = [];
  /** Group writes in progress. */
  private readonly writes = new Set<Promise<void>>();
  private lingering: NodeJS.Timeout | null = null;
  /** Sends started and not finished, over all lanes. */
  private inFlight = 0;
  /** A skipped account finished a send with nothing left waiting: write its outcomes now. */
  private laneRunningDry = false;
  private claimer: Promise<void> | null = null;
  private reconciler: Promise<void> | null = null;
  /** Wakes the claimer or the reconciler from their pauses. */
  private readonly sleepers = new Set<() => void>();
  private wakeClaimer: (() => void) | null = null;
  private wakeMissed = false;
  private waitingForRoom = false;
  /** The last claim that found fewer messages than it asked for, and the accounts it skipped. */
  private lastShortClaim: { skipKey: string; at: number } | null = null;
  /** When held work last moved (a message recorded or given back), or when there was none. */
  private lastProgressAt: number;
  private readonly heartbeats: LoopHeartbeat[] = [];
  private claimsBeat: LoopHeartbeat | null = null;
  private reconcileBeat: LoopHeartbeat | null = null;

  constructor(
    private readonly dispatcher: MessageDispatcher,
    private readonly settings: DispatcherLoopSettings,
    private readonly log: Logger,
    private readonly health: LoopHealth | null = null,
    private readonly clock: () => number = Date.now,
  ) {
    this.lastProgressAt = clock();
  }

  private get capacity(): number {
    return this.settings.parallelRounds * this.dispatcher.settings.batchSize;
  }

  /** Claims are not made one slot at a time: wait for a tenth of the room (up to a claim). */
  private get minimumClaim(): number {
    return Math.max(1, Math.min(this.dispatcher.settings.batchSize, Math.floor(this.capacity / 10)));
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
    const bounds = this.settings.stallBounds;
    if (this.health && bounds) {
      this.claimsBeat = this.health.register('dispatch_claims', bounds.claimsMs);
      // Sends and their recording: stalled when messages are held and none has moved for too long.
      const sendsBeat = this.health.register('dispatch_sends', bounds.sendsMs, (now) => (this.held > 0 ? now - this.lastProgressAt : 0));
      this.reconcileBeat = this.health.register('dispatch_reconcile', bounds.reconcileMs);
      this.heartbeats.push(this.claimsBeat, sendsBeat, this.reconcileBeat);
    }
    this.claimer = this.claim();
    this.reconciler = this.reconcile();
  }

  /** Every few seconds: claims whose worker died, and unknown outcomes whose wait ended, are reconciled. */
  private async reconcile(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.dispatcher.reconcileExpiredClaims();
        this.reconcileBeat?.beat();
      } catch (error) {
        this.log.error({ err: error }, 'reconciling expired claims failed');
      }
      await this.sleep(this.settings.reconcileEveryMs);
    }
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

  private async claim(): Promise<void> {
    while (!this.stopped) {
      const room = this.capacity - this.held;
      if (room < this.minimumClaim) {
        this.waitingForRoom = true;
        await this.pauseClaimer(this.settings.idlePollMs);
        this.waitingForRoom = false;
        this.claimsBeat?.beat();
        continue;
      }
      const limit = Math.min(room, this.dispatcher.settings.batchSize);
      const now = this.clock();
      const skipped = this.skippedAccounts(now);
      const skipKey = skipped.sort().join(',');
      const lastShort = this.lastShortClaim;
      if (skipped.length > 0 && lastShort?.skipKey === skipKey && now - lastShort.at < this.settings.idlePollMs) {
        // The same accounts were skipped a moment ago and nothing else was due: the claim would
        // only walk past the skipped accounts' rows again. New messages wait at most a poll, as ever.
        await this.pauseClaimer(this.settings.idlePollMs - (now - lastShort.at));
        this.claimsBeat?.beat();
        continue;
      }
      let claimed: ClaimedMessage[] = [];
      try {
        claimed = await this.dispatcher.claim(limit, skipped);
        // Only a claim that worked is a round: a store that keeps failing is a stall too.
        this.claimsBeat?.beat();
      } catch (error) {
        this.log.error({ err: error }, 'claiming messages to dispatch failed');
      }
      if (claimed.length < limit) this.lastShortClaim = { skipKey, at: now };
      for (const message of claimed) this.enqueue(message);
      // Claimed while stop() began: the lanes give them back below.
      if (this.stopped) break;
      if (claimed.length < limit) await this.pauseClaimer(this.settings.idlePollMs);
    }
  }

  private enqueue(message: ClaimedMessage): void {
    let lane = this.lanes.get(message.oa_id);
    if (!lane) {
      lane = { waiting: [], active: 0, held: 0, pausedUntil: 0, probing: false, unknownStreak: 0, skipped: false };
      this.lanes.set(message.oa_id, lane);
    }
    if (this.held === 0) this.lastProgressAt = this.clock();
    lane.held += 1;
    this.held += 1;
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
    while (lane.active < this.limitOf(lane) && lane.waiting.length > 0) {
      const message = lane.waiting.shift()!;
      lane.active += 1;
      this.inFlight += 1;
      const send = this.sendOne(oaId, lane, message).finally(() => this.sends.delete(send));
      this.sends.add(send);
    }
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
    this.held -= 1;
    this.lastProgressAt = this.clock();
    if (lane.held === 0 && !lane.probing && lane.pausedUntil <= this.clock()) this.lanes.delete(oaId);
    const roomFreed = this.waitingForRoom && this.capacity - this.held >= this.minimumClaim;
    if (roomFreed) this.wake();
  }

  /**
   * A skipped account has room again: claim for it without waiting out the pause. This happens as
   * soon as its unfinished messages fall below its busy level (not once its outcomes are written),
   * and a claim brings up to a claim's worth, so its sends do not run dry while a wave is written.
   */
  private wakeIfFreed(lane: Lane): void {
    if (!lane.skipped || this.unfinished(lane) >= this.busyLevel(lane) || lane.pausedUntil > this.clock()) return;
    lane.skipped = false;
    this.wake();
  }

  private wake(): void {
    if (this.wakeClaimer) this.wakeClaimer();
    else this.wakeMissed = true;
  }

  private pauseClaimer(delayMs: number): Promise<void> {
    if (this.wakeMissed) {
      this.wakeMissed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        if (this.wakeClaimer === done) this.wakeClaimer = null;
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      this.sleepers.add(done);
      this.wakeClaimer = done;
    });
  }

  private sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      this.sleepers.add(done);
    });
  }

  /** Graceful stop: resolves when every message this process held is recorded or given back. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.sleepers]) wake();
    await this.claimer;
    for (const [oaId, lane] of this.lanes) this.pump(oaId, lane);
    while (this.sends.size > 0) await Promise.all([...this.sends]);
    this.scheduleRecording();
    while (this.writes.size > 0) await Promise.all([...this.writes]);
    await this.reconciler;
    for (const heartbeat of this.heartbeats) heartbeat.stop();
  }
}
