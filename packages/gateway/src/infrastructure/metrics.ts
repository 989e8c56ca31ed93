import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';
import type { Store } from '../store/database.ts';
import { readQueueStats } from '../store/queue-stats.ts';
import { registerAccountGauges } from './account-metrics.ts';
import { HttpMetrics } from './http-metrics.ts';
import { LoopHealth, type LoopStatus } from './loop-health.ts';
import { WebhookMetrics } from './webhook-metrics.ts';

/** What one thread counted, and how its worker loops fare: sent to the thread that serves /metrics and /readyz. */
export interface ThreadReport {
  metrics: MetricObjectWithValues<MetricValue<string>>[];
  loops: LoopStatus[];
}

/** Another thread of this process whose counts and loops this thread's /metrics and /readyz include. */
export interface MetricsPeer {
  /** Rejects when the thread does not answer in time (its event loop is stuck). */
  report(): Promise<ThreadReport>;
}

/**
 * Prometheus metrics of one process. Transitions are counted where they happen (rates come from
 * counters), in the thread they happen in; the queue's depth and age are read from the store at
 * scrape time, and the process's own metrics come from the thread that serves /metrics. A process
 * whose workers run in a second thread adds that thread as a peer: its counts are summed in.
 */
export class Metrics {
  /** What this thread counts. */
  readonly registry = new Registry();
  /** Store-wide gauges read at scrape time, and the process's CPU and memory: once per process. */
  readonly #processWide: Registry | null;
  readonly #peers: MetricsPeer[] = [];
  readonly accepted: Counter<'path'>;
  readonly dispatchOutcomes: Counter<'outcome'>;
  readonly platformErrors: Counter<'code' | 'call'>;
  readonly dispatchLatency: Histogram;
  readonly delivered: Counter;
  /** Sends whose outcome is unknown (the platform may have taken them), by cause. */
  readonly unknownOutcomes: Counter<'cause'>;
  /** Unconfirmed sends sent again after their grace period passed without a trace: possible duplicates. */
  readonly unconfirmedResends: Counter;
  /** Delivery-report webhooks: outcomes, attempt latency, the outbox. */
  readonly webhooks: WebhookMetrics;
  /** Whether the worker loops of this process make progress (readiness, and a gauge of their age). */
  readonly loops: LoopHealth;
  /** HTTP requests per route and status class. */
  readonly http: HttpMetrics;

  /** `processWide: false` in a thread whose metrics another thread of the process serves. */
  constructor(store: Store, clock: () => number, options: { processWide: boolean } = { processWide: true }) {
    const processWide = options.processWide ? new Registry() : null;
    this.#processWide = processWide;
    // prom-client's names already start with process_ or nodejs_: tms_process_cpu_seconds_total.
    if (processWide) collectDefaultMetrics({ register: processWide, prefix: 'tms_' });
    this.accepted = new Counter({ name: 'tms_messages_accepted_total', help: 'Messages accepted (202) by this process', labelNames: ['path'], registers: [this.registry] });
    this.dispatchOutcomes = new Counter({
      name: 'tms_dispatch_outcomes_total',
      help: 'Dispatch attempts by outcome: sent, failed (refunded) or retry (requeued)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.platformErrors = new Counter({ name: 'tms_platform_errors_total', help: 'Errors answered by the platform, by ZNS code and by call (send: a dispatch attempt; status: a delivery status lookup)', labelNames: ['code', 'call'], registers: [this.registry] });
    this.dispatchLatency = new Histogram({
      name: 'tms_dispatch_latency_seconds',
      help: 'From the time a message was due to the platform accepting it',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers: [this.registry],
    });
    this.delivered = new Counter({ name: 'tms_messages_delivered_total', help: 'Messages marked delivered, from platform events or delivery status checks', registers: [this.registry] });
    this.unknownOutcomes = new Counter({
      name: 'tms_dispatch_unknown_outcomes_total',
      help: 'Sends whose outcome is unknown, left unconfirmed to wait for a delivery event: timeout, connection_lost, ambiguous_answer (after the request was written) or expired_claim (a worker died)',
      labelNames: ['cause'],
      registers: [this.registry],
    });
    this.unconfirmedResends = new Counter({
      name: 'tms_dispatch_unconfirmed_resends_total',
      help: 'Unconfirmed sends requeued after their grace period ended without a delivery event; each may be a duplicate at the platform',
      registers: [this.registry],
    });
    const loops = new LoopHealth(clock);
    this.loops = loops;
    new Gauge({
      name: 'tms_worker_loop_last_round_age_seconds',
      help: 'How long since each worker loop of this process last completed a round or made progress; /readyz fails when one passes its bound',
      labelNames: ['loop'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of loops.statuses()) this.set({ loop: status.loop }, status.ageMs / 1000);
      },
    });
    registerThreadHeapGauges(this.registry);
    this.webhooks = new WebhookMetrics(this.registry, processWide, store, clock);
    this.http = new HttpMetrics(this.registry);
    if (!processWide) return;
    registerAccountGauges(processWide, store);
    const oldest = new Gauge({
      name: 'tms_queue_oldest_due_age_seconds',
      help: 'How long the oldest due queued message has waited (0 when none is due)',
      registers: [],
    });
    // Registered first: its collect() reads the store once and also sets the age gauge after it.
    new Gauge({
      name: 'tms_queue_messages',
      help: 'Messages in the queue by state (queued, due, sending)',
      labelNames: ['state'],
      registers: [processWide],
      async collect() {
        const now = clock();
        const stats = await readQueueStats(store.db, now);
        this.set({ state: 'queued' }, stats.queued);
        this.set({ state: 'due' }, stats.due);
        this.set({ state: 'sending' }, stats.sending);
        oldest.set(stats.oldestDueAt === null || stats.oldestDueAt > now ? 0 : (now - stats.oldestDueAt) / 1000);
      },
    });
    processWide.registerMetric(oldest);
  }

  addPeer(peer: MetricsPeer): void {
    this.#peers.push(peer);
  }

  /** This thread's part, for the thread that serves the process's metrics. */
  async report(): Promise<ThreadReport> {
    return { metrics: await this.registry.getMetricsAsJSON(), loops: this.loops.statuses() };
  }

  async render(): Promise<{ contentType: string; body: string }> {
    let counted = this.registry;
    if (this.#peers.length > 0) {
      const reports = await Promise.all(this.#peers.map((peer) => peer.report()));
      counted = AggregatorRegistry.aggregate([await this.registry.getMetricsAsJSON(), ...reports.map((report) => report.metrics)]);
    }
    // The process-wide metrics are not aggregated: aggregation drops some (the start time).
    const bodies = [await counted.metrics()];
    if (this.#processWide) bodies.push(await this.#processWide.metrics());
    return { contentType: this.registry.contentType, body: bodies.join('\n') };
  }

  /**
   * The worker loops of this process, in every thread, that have not completed a round within
   * their bound. Rejects when another thread does not answer: its loops cannot be making progress.
   */
  async stalledLoops(now: number): Promise<LoopStatus[]> {
    const reports = await Promise.all(this.#peers.map((peer) => peer.report()));
    const peerLoops = reports.flatMap((report) => report.loops.filter((status) => status.ageMs > status.boundMs));
    return [...this.loops.stalled(now), ...peerLoops];
  }
}

/**
 * Each thread's V8 heap, labelled by thread (`main`, or `workers` for the workers' thread of
 * `tms start`): the process-wide tms_nodejs_heap_* gauges see the main thread only, and a thread
 * that reaches its limit ends the process.
 */
function registerThreadHeapGauges(registry: Registry): void {
  const thread = isMainThread ? 'main' : 'workers';
  new Gauge({
    name: 'tms_thread_heap_used_bytes',
    help: "V8 heap in use by each thread of the process (main; workers: the workers' thread of tms start)",
    labelNames: ['thread'],
    registers: [registry],
    collect() {
      this.set({ thread }, getHeapStatistics().used_heap_size);
    },
  });
  new Gauge({
    name: 'tms_thread_heap_limit_bytes',
    help: "V8 heap limit of each thread (TMS_WORKER_THREAD_HEAP_MB for the workers' thread); a thread that reaches it ends the process",
    labelNames: ['thread'],
    registers: [registry],
    collect() {
      this.set({ thread }, getHeapStatistics().heap_size_limit);
    },
  });
}
