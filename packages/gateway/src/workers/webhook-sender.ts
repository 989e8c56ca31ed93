/**
 * The webhook sender's loop in `tms start` and `tms worker`: claims due deliveries while it has
 * room, and works each receiver (URL origin) in its own lane, at most `receiverConcurrency`
 * requests at once over keep-alive connections. A lane holding twice that is "busy": the next
 * claims skip its URLs, so a slow or dead receiver fills only its own lane and every other
 * receiver keeps being served. Every attempt records its own outcome; nothing waits for a round.
 *
 * stop() (SIGTERM): stops claiming, gives back the deliveries not yet started, lets the attempts
 * in flight finish for a grace period, then cuts them short and gives those back too (uncounted).
 */
import type { Logger } from 'pino';
import type { LoopHealth, LoopHeartbeat } from '../services/loop-health.ts';
import type { DeliveryOutcome, WebhookJob, WebhookSender } from '../services/webhook-sender.ts';

export interface WebhookSenderLoopSettings {
  /** Deliveries held at once by this process (queued in lanes, in flight, being recorded). */
  concurrency: number;
  /** Requests in flight per receiver. */
  receiverConcurrency: number;
  /** Most deliveries per claim. */
  batchSize: number;
  /** Pause when nothing is due. */
  idlePollMs: number;
  /** How long stop() lets attempts in flight finish before cutting them short. */
  stopGraceMs: number;
  /** Stall bounds for readiness (services/loop-health.ts): claims, and deliveries held. */
  stallBounds?: { claimsMs: number; deliveriesMs: number };
}

/** One receiver's deliveries in this process. */
interface Lane {
  readonly waiting: WebhookJob[];
  active: number;
  /** waiting + active (an active one counts until its outcome is recorded). */
  held: number;
  /** How many held deliveries go to each URL of this receiver: the URLs a claim skips while it is busy. */
  readonly urls: Map<string, number>;
  /** A claim skipped this receiver: wake the claimer once the lane has room again. */
  skipped: boolean;
}

/** The receiver a URL belongs to: scheme, host and port. */
function laneKeyOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export class WebhookSenderLoop {
  private stopped = false;
  private held = 0;
  private readonly lanes = new Map<string, Lane>();
  private readonly attempts = new Set<Promise<void>>();
  private claimer: Promise<void> | null = null;
  /** Wakes the claimer from its pause: room was made, or a busy receiver has room again. */
  private wake: (() => void) | null = null;
  /** A wake-up that came while the claimer was busy claiming: its next pause ends at once. */
  private wakeMissed = false;
  private waitingForRoom = false;
  /** When held deliveries last moved (one recorded or given back), or when there were none. */
  private lastProgressAt: number;
  private readonly heartbeats: LoopHeartbeat[] = [];
  private claimsBeat: LoopHeartbeat | null = null;

  constructor(
    private readonly sender: WebhookSender,
    private readonly settings: WebhookSenderLoopSettings,
    private readonly log: Logger,
    private readonly health: LoopHealth | null = null,
    private readonly clock: () => number = Date.now,
  ) {
    this.lastProgressAt = clock();
  }

  start(): void {
    const bounds = this.settings.stallBounds;
    if (this.health && bounds) {
      this.claimsBeat = this.health.register('webhook_claims', bounds.claimsMs);
      const deliveriesBeat = this.health.register('webhook_deliveries', bounds.deliveriesMs, (now) => (this.held > 0 ? now - this.lastProgressAt : 0));
      this.heartbeats.push(this.claimsBeat, deliveriesBeat);
    }
    this.claimer = this.run();
  }

  /** A receiver is busy when its lane holds twice what it may have in flight: one wave waiting at most. */
  private get busyLevel(): number {
    return 2 * this.settings.receiverConcurrency;
  }

  /** Claims are not made one slot at a time: wait for a tenth of the room (up to a batch). */
  private get minimumClaim(): number {
    return Math.max(1, Math.min(this.settings.batchSize, Math.floor(this.settings.concurrency / 10)));
  }

  private busyUrls(): string[] {
    const urls: string[] = [];
    for (const lane of this.lanes.values()) {
      if (lane.held < this.busyLevel) continue;
      lane.skipped = true;
      urls.push(...lane.urls.keys());
    }
    return urls;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const room = this.settings.concurrency - this.held;
      if (room < this.minimumClaim) {
        this.waitingForRoom = true;
        await this.pause(this.settings.idlePollMs);
        this.waitingForRoom = false;
        this.claimsBeat?.beat();
        continue;
      }
      const limit = Math.min(room, this.settings.batchSize);
      let jobs: WebhookJob[] = [];
      try {
        jobs = await this.sender.claim(limit, this.busyUrls());
        this.claimsBeat?.beat();
      } catch (error) {
        this.log.error({ err: error }, 'claiming webhook deliveries failed');
      }
      if (this.stopped) {
        // Claimed while stop() began: give them straight back.
        await this.sender.release(jobs).catch((error: unknown) => this.log.error({ err: error }, 'releasing webhook deliveries failed'));
        break;
      }
      for (const job of jobs) this.enqueue(job);
      if (jobs.length < limit) await this.pause(this.settings.idlePollMs);
    }
  }

  private enqueue(job: WebhookJob): void {
    const key = laneKeyOf(job.delivery.url);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { waiting: [], active: 0, held: 0, urls: new Map(), skipped: false };
      this.lanes.set(key, lane);
    }
    if (this.held === 0) this.lastProgressAt = this.clock();
    lane.held += 1;
    lane.urls.set(job.delivery.url, (lane.urls.get(job.delivery.url) ?? 0) + 1);
    this.held += 1;
    lane.waiting.push(job);
    this.pump(key, lane);
  }

  private pump(key: string, lane: Lane): void {
    while (lane.active < this.settings.receiverConcurrency && lane.waiting.length > 0) {
      const job = lane.waiting.shift()!;
      lane.active += 1;
      const attempt = this.work(key, lane, job).finally(() => this.attempts.delete(attempt));
      this.attempts.add(attempt);
    }
  }

  /**
   * One attempt: the receiver's slot is freed as soon as it answers, the delivery's room once its
   * outcome is written (outcomes are committed in groups, so a slot never waits for a commit).
   */
  private async work(key: string, lane: Lane, job: WebhookJob): Promise<void> {
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.sender.send(job);
    } finally {
      lane.active -= 1;
      this.pump(key, lane);
    }
    try {
      await this.sender.record([outcome]);
    } catch (error) {
      this.log.error({ err: error, delivery_id: job.delivery.id }, 'recording a webhook attempt failed; it is attempted again when its claim expires');
    } finally {
      this.settle(key, lane, [job]);
    }
  }

  /** Jobs left the lane (recorded or released): free their room and wake the claimer if it waits for it. */
  private settle(key: string, lane: Lane, jobs: WebhookJob[]): void {
    if (jobs.length > 0) this.lastProgressAt = this.clock();
    for (const job of jobs) {
      lane.held -= 1;
      this.held -= 1;
      const left = (lane.urls.get(job.delivery.url) ?? 1) - 1;
      if (left === 0) lane.urls.delete(job.delivery.url);
      else lane.urls.set(job.delivery.url, left);
    }
    if (lane.held === 0) this.lanes.delete(key);
    // Hysteresis: a skipped receiver is claimed for again once half its lane is free, not slot by slot.
    const receiverFreed = lane.skipped && lane.held <= this.settings.receiverConcurrency;
    if (receiverFreed) lane.skipped = false;
    const roomFreed = this.waitingForRoom && this.settings.concurrency - this.held >= this.minimumClaim;
    if (!receiverFreed && !roomFreed) return;
    if (this.wake) this.wake();
    else this.wakeMissed = true;
  }

  private pause(delayMs: number): Promise<void> {
    if (this.wakeMissed) {
      this.wakeMissed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      this.wake = done;
    });
  }

  /** Graceful stop; resolves when every delivery this process held is recorded or given back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.claimer;
    const notStarted: WebhookJob[] = [];
    for (const [key, lane] of [...this.lanes]) {
      const jobs = lane.waiting.splice(0);
      notStarted.push(...jobs);
      this.settle(key, lane, jobs);
    }
    if (notStarted.length > 0) {
      await this.sender.release(notStarted).catch((error: unknown) => this.log.error({ err: error }, 'releasing webhook deliveries failed'));
      this.log.info({ count: notStarted.length }, 'webhook deliveries not started were given back');
    }
    const grace = setTimeout(() => this.sender.abortInFlight(), this.settings.stopGraceMs);
    await Promise.all([...this.attempts]);
    clearTimeout(grace);
    await this.sender.close();
    for (const heartbeat of this.heartbeats) heartbeat.stop();
  }
}
