/**
 * Delivery events (`user_received_message`) to the configured URL, signed like Zalo signs them:
 *   X-ZEvent-Signature: mac=<sha256_hex(app_id + rawBody + timestamp + OA secret key)>   (plain SHA-256, not HMAC)
 * A non-200 answer, a network error or a timeout is retried along `retry_delays_ms`; retries carry `num_retry`.
 * The body (and so the signature) is built once and is identical on every attempt.
 */
import { hash } from 'node:crypto';
import { Pool, type Dispatcher } from 'undici';
import type { Scheduler } from './scheduler.ts';
import type { EventSettings } from './seed.ts';

export interface DeliveryEventInput {
  app_id: string;
  oa_id: string;
  oa_secret_key: string;
  recipient: string;
  msg_id: string;
  delivery_time: number;
  tracking_id: string;
}

export interface EventAttempt {
  msg_id: string;
  attempt: number;
  url: string;
  time: number;
  /** HTTP status, or 0 for a network error or timeout. */
  status: number;
  ok: boolean;
  error?: string;
}

export interface EventStats {
  sent: number;
  attempts: number;
  failed_attempts: number;
  retries: number;
  gave_up: number;
  dropped: number;
  skipped_no_url: number;
  in_flight: number;
  queued: number;
}

interface PendingEvent {
  msgId: string;
  raw: string;
  signature: string;
  attempt: number;
}

const ATTEMPT_LOG_LIMIT = 10_000;

export function signEvent(appId: string, rawBody: string, timestamp: string, oaSecretKey: string): string {
  // The one-shot hash: no Hash object per event.
  return hash('sha256', appId + rawBody + timestamp + oaSecretKey, 'hex');
}

export class EventDispatcher {
  readonly stats: EventStats = { sent: 0, attempts: 0, failed_attempts: 0, retries: 0, gave_up: 0, dropped: 0, skipped_no_url: 0, in_flight: 0, queued: 0 };
  private readonly waiting: PendingEvent[] = [];
  private waitingHead = 0;
  private readonly log: EventAttempt[] = [];
  private logNext = 0;
  /** One keep-alive pool per origin; the parsed target is cached per URL string. */
  private readonly pools = new Map<string, Pool>();
  private target: { url: string; pool: Pool; path: string } | null = null;
  private closed = false;

  constructor(
    private readonly settings: () => EventSettings,
    private readonly scheduler: Scheduler,
  ) {}

  /** Called at delivery time. Applies the drop rate, builds and signs the event, and sends it. */
  emit(input: DeliveryEventInput): void {
    const cfg = this.settings();
    if (!cfg.url) {
      this.stats.skipped_no_url++;
      return;
    }
    if (cfg.drop_rate > 0 && Math.random() < cfg.drop_rate) {
      this.stats.dropped++;
      return;
    }
    const timestamp = String(Date.now());
    const raw = JSON.stringify({
      app_id: input.app_id,
      event_name: 'user_received_message',
      sender: { id: input.oa_id },
      recipient: { id: input.recipient },
      message: { msg_id: input.msg_id, delivery_time: String(input.delivery_time), tracking_id: input.tracking_id },
      timestamp,
    });
    const ev: PendingEvent = { msgId: input.msg_id, raw, signature: `mac=${signEvent(input.app_id, raw, timestamp, input.oa_secret_key)}`, attempt: 0 };
    this.dispatch(ev);
  }

  attempts(): EventAttempt[] {
    if (this.log.length < ATTEMPT_LOG_LIMIT) return this.log.slice();
    return [...this.log.slice(this.logNext), ...this.log.slice(0, this.logNext)];
  }

  clearLog(): void {
    this.log.length = 0;
    this.logNext = 0;
  }

  resetStats(): void {
    for (const k of Object.keys(this.stats) as (keyof EventStats)[]) {
      if (k !== 'in_flight' && k !== 'queued') this.stats[k] = 0;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    this.waitingHead = 0;
    this.stats.queued = 0;
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.target = null;
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }

  private targetFor(url: string): { url: string; pool: Pool; path: string } {
    if (this.target?.url === url) return this.target;
    const u = new URL(url);
    let pool = this.pools.get(u.origin);
    if (!pool) {
      pool = new Pool(u.origin, { connections: 256, keepAliveTimeout: 10_000, connectTimeout: 5_000 });
      this.pools.set(u.origin, pool);
    }
    this.target = { url, pool, path: `${u.pathname}${u.search}` };
    return this.target;
  }

  private dispatch(ev: PendingEvent): void {
    if (this.closed) return;
    if (this.stats.in_flight >= this.settings().max_in_flight) {
      this.waiting.push(ev);
      this.stats.queued++;
      return;
    }
    this.send(ev);
  }

  private record(a: EventAttempt): void {
    if (this.log.length < ATTEMPT_LOG_LIMIT) this.log.push(a);
    else {
      this.log[this.logNext] = a;
      this.logNext = (this.logNext + 1) % ATTEMPT_LOG_LIMIT;
    }
  }

  /** Posts one attempt of `ev`; its outcome comes back through an AttemptHandler to `finish`. */
  private send(ev: PendingEvent): void {
    const cfg = this.settings();
    const url = cfg.url;
    if (!url) {
      this.stats.skipped_no_url++;
      this.next();
      return;
    }
    this.stats.in_flight++;
    this.stats.attempts++;
    const handler = new AttemptHandler(this, ev, url);
    try {
      const target = this.targetFor(url);
      // undici's dispatch with a handler of our own: no response object, body stream or promise per event.
      target.pool.dispatch(
        {
          path: target.path,
          method: 'POST',
          headers: ev.attempt > 0 ? [...eventHeaders(ev.signature), 'num_retry', String(ev.attempt)] : eventHeaders(ev.signature),
          body: ev.raw,
          headersTimeout: cfg.timeout_ms,
          bodyTimeout: cfg.timeout_ms,
        },
        handler,
      );
    } catch (err) {
      handler.onResponseError(null, err as Error);
    }
  }

  /** The end of one attempt: recorded, then retried along the ladder or given up, and the next waiting event goes out. */
  finish(ev: PendingEvent, url: string, status: number, error: string | undefined): void {
    this.stats.in_flight--;
    if (this.closed) return;
    const ok = status === 200;
    const attempt: EventAttempt = { msg_id: ev.msgId, attempt: ev.attempt, url, time: Date.now(), status, ok };
    if (error) attempt.error = error;
    this.record(attempt);
    if (ok) this.stats.sent++;
    else {
      this.stats.failed_attempts++;
      const ladder = this.settings().retry_delays_ms;
      const delay = ladder[ev.attempt];
      if (delay === undefined) this.stats.gave_up++;
      else {
        this.stats.retries++;
        ev.attempt++;
        this.scheduler.after(delay, () => this.dispatch(ev));
      }
    }
    this.next();
  }

  private next(): void {
    while (this.waitingHead < this.waiting.length && this.stats.in_flight < this.settings().max_in_flight) {
      const ev = this.waiting[this.waitingHead++] as PendingEvent;
      this.stats.queued--;
      this.send(ev);
    }
    if (this.waitingHead > 1024 && this.waitingHead * 2 > this.waiting.length) {
      this.waiting.splice(0, this.waitingHead);
      this.waitingHead = 0;
    }
  }
}

function eventHeaders(signature: string): string[] {
  return ['content-type', 'application/json', 'x-zevent-signature', signature, 'user-agent', 'tms-zns-sim'];
}

/**
 * One attempt's answer: its status counts, its body is read and dropped. An error after a status has arrived
 * (the body broke off) still counts the status, as the answer was already given.
 */
class AttemptHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private settled = false;

  constructor(
    private readonly dispatcher: EventDispatcher,
    private readonly event: PendingEvent,
    private readonly url: string,
  ) {}

  /** Present so that undici takes this for a handler of its current interface. */
  onRequestStart(): void {
    // nothing to keep: an attempt is never aborted from here
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // 1xx interim answers are followed by the real one.
    if (statusCode >= 200) this.status = statusCode;
  }

  onResponseData(): void {
    // the body is not needed
  }

  onResponseEnd(): void {
    this.settle(this.status, undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.settle(this.status, this.status === 0 ? error.message : undefined);
  }

  private settle(status: number, error: string | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.dispatcher.finish(this.event, this.url, status, error);
  }
}
