import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Store } from '../store/database.ts';
import { readOutboxStats } from '../store/webhook-deliveries.ts';

/**
 * The delivery-report webhooks' metrics: outcomes and attempt latency counted where they happen
 * (per process), the outbox read from the store at scrape time (shared by all processes).
 */
export class WebhookMetrics {
  /** delivered, retry, failed (after the last retry), cancelled (key revoked or URL removed), released (worker stopping). */
  readonly outcomes: Counter<'outcome'>;
  readonly attemptSeconds: Histogram<'result'>;

  /** `processWide`: where the outbox gauges go, read from the store (null: another thread serves them). */
  constructor(registry: Registry, processWide: Registry | null, store: Store, clock: () => number) {
    this.outcomes = new Counter({
      name: 'tms_webhook_deliveries_total',
      help: 'Delivery-report webhook outcomes recorded by this process: delivered, retry, failed, cancelled or released',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.attemptSeconds = new Histogram({
      name: 'tms_webhook_attempt_duration_seconds',
      help: "Webhook attempts by result (2xx, non_2xx, no_answer): from connecting to the receiver's answer",
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    if (!processWide) return;
    const oldest = new Gauge({
      name: 'tms_webhook_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest delivery report not yet delivered, failed or cancelled (0 when none)',
      registers: [],
    });
    // Registered first: its collect() reads the store once and sets the age gauge too.
    new Gauge({
      name: 'tms_webhook_outbox_deliveries',
      help: 'Delivery reports in the outbox by state: pending (not delivered yet), due (waiting for a worker), in_flight (claimed), failed (waiting for the operator)',
      labelNames: ['state'],
      registers: [processWide],
      async collect() {
        const now = clock();
        const stats = await readOutboxStats(store.db, now);
        this.set({ state: 'pending' }, stats.pending);
        this.set({ state: 'due' }, stats.due);
        this.set({ state: 'in_flight' }, stats.inFlight);
        this.set({ state: 'failed' }, stats.failed);
        oldest.set(stats.oldestPendingCreatedAt === null ? 0 : Math.max(0, now - stats.oldestPendingCreatedAt) / 1000);
      },
    });
    processWide.registerMetric(oldest);
  }
}
