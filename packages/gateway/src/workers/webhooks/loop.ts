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
import type { LoopHealth } from '../../infrastructure/loop-health.ts';
import { ClaimLoop } from '../claim-loop.ts';
import { fillSlots, InFlight, type LaneSlots } from '../lane-slots.ts';
import type { DeliveryOutcome, WebhookJob, WebhookSender } from './engine.ts';

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
  /** Stall bounds for readiness (infrastructure/loop-health.ts): claims, and deliveries held. */
  stallBounds?: { claimsMs: number; deliveriesMs: number };
}

/** One receiver's deliveries in this process. */
interface Lane extends LaneSlots<WebhookJob> {
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
  private readonly lanes = new Map<string, Lane>();
  private readonly attempts = new InFlight();
  /** Claims deliveries while there is room; held work is the deliveries queued in lanes, in flight or being recorded. */
  private readonly claims: ClaimLoop;

  constructor(
    private readonly sender: WebhookSender,
    private readonly settings: WebhookSenderLoopSettings,
    private readonly log: Logger,
    health: LoopHealth | null = null,
    clock: () => number = Date.now,
  ) {
    const bounds = health && settings.stallBounds ? { loops: health, ...settings.stallBounds } : null;
    const reported = bounds && { loops: bounds.loops, claims: { loop: 'webhook_claims', boundMs: bounds.claimsMs }, held: { loop: 'webhook_deliveries', boundMs: bounds.deliveriesMs } };
    const sizes = { capacity: settings.concurrency, batchSize: settings.batchSize, idlePollMs: settings.idlePollMs };
    this.claims = new ClaimLoop(sizes, (limit) => this.claim(limit), { failureMessage: 'claiming webhook deliveries failed', log, clock, health: reported });
  }

  start(): void {
    this.claims.start();
  }

  /** A receiver is busy when its lane holds twice what it may have in flight: one wave waiting at most. */
  private get busyLevel(): number {
    return 2 * this.settings.receiverConcurrency;
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

  /** One claim of up to `limit` deliveries; resolves to the pause before the next. */
  private async claim(limit: number): Promise<number | void> {
    const jobs = await this.sender.claim(limit, this.busyUrls());
    if (this.stopped) {
      // Claimed while stop() began: give them straight back.
      await this.sender.release(jobs).catch((error: unknown) => this.log.error({ err: error }, 'releasing webhook deliveries failed'));
      return;
    }
    for (const job of jobs) this.enqueue(job);
    return jobs.length < limit ? this.settings.idlePollMs : 0;
  }

  private enqueue(job: WebhookJob): void {
    const key = laneKeyOf(job.delivery.url);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { waiting: [], active: 0, held: 0, urls: new Map(), skipped: false };
      this.lanes.set(key, lane);
    }
    this.claims.hold();
    lane.held += 1;
    lane.urls.set(job.delivery.url, (lane.urls.get(job.delivery.url) ?? 0) + 1);
    lane.waiting.push(job);
    this.pump(key, lane);
  }

  private pump(key: string, lane: Lane): void {
    fillSlots(lane, this.settings.receiverConcurrency, this.attempts, (job) => this.work(key, lane, job));
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
    for (const job of jobs) {
      lane.held -= 1;
      const left = (lane.urls.get(job.delivery.url) ?? 1) - 1;
      if (left === 0) lane.urls.delete(job.delivery.url);
      else lane.urls.set(job.delivery.url, left);
    }
    if (lane.held === 0) this.lanes.delete(key);
    // Hysteresis: a skipped receiver is claimed for again once half its lane is free, not slot by slot.
    const receiverFreed = lane.skipped && lane.held <= this.settings.receiverConcurrency;
    if (receiverFreed) lane.skipped = false;
    this.claims.settle(jobs.length, receiverFreed);
  }

  /** Graceful stop; resolves when every delivery this process held is recorded or given back. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.claims.stopClaiming();
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
    await this.attempts.settled();
    clearTimeout(grace);
    await this.sender.close();
    this.claims.stopReporting();
  }
}
