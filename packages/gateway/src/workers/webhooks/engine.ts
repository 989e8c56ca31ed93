/**
 * The delivery-report sender (docs/api.md, delivery reports; README, Architecture, flow 3): claims due rows of the
 * webhook_deliveries outbox, POSTs each stored body byte for byte, signed with the API key that
 * sent the message, and records the outcome with its attempt-log row. Outcomes of concurrent
 * attempts are written together (group commit), so a busy sender pays one transaction for many.
 *
 * The retry ladder (docs/api.md): any non-2xx answer, a timeout or a connection error is retried
 * after each delay of `retryDelaysMs` in turn (1 s, 5 s, 30 s, 2 min, 10 min), each counted from
 * the end of the failed attempt; after the last one the delivery is failed. A redelivery starts the
 * ladder again. Scheduling across receivers (how many at once, which) is the worker loop's job.
 */
import type { WebhookSettings } from '../../config/config.ts';
import { decryptSecret, type SecretKeys } from '../../lib/crypto.ts';
import { GroupCommitter } from '../../lib/group-commit.ts';
import { createSortableId } from '../../lib/ids.ts';
import { retryWrite } from '../../lib/retry-write.ts';
import { ATTEMPT_HEADER, deliveryReportHeaders } from '../../lib/webhook-signature.ts';
import { WebhookTransport, type WebhookAnswer } from '../../lib/webhook-transport.ts';
import type { WebhookAttemptRow } from '../../store/schema.ts';
import {
  claimDueDeliveries,
  findSigningKeys,
  recordDeliveryOutcomes,
  REMOVED_URL_REASON,
  REVOKED_KEY_REASON,
  type ClaimedDelivery,
  type ClaimRef,
  type DeliveryOutcome,
  type SigningKey,
} from '../../store/webhook-deliveries.ts';
import type { ServiceParts } from '../../services/context.ts';

export type { DeliveryOutcome } from '../../store/webhook-deliveries.ts';

/** A claimed delivery with the key that signs it. */
export interface WebhookJob {
  readonly delivery: ClaimedDelivery;
  readonly signingKey: string;
}

/**
 * An attempt starts only if its claim outlives the attempt's time limit by this much (to record
 * it); otherwise it is given back. Config requires a lease of at least timeout + 2 × this.
 */
const LEASE_MARGIN_MS = 1000;
const KEY_CACHE_LIMIT = 10_000;

type SenderParts = Pick<ServiceParts, 'store' | 'clock' | 'log' | 'metrics'>;

function claimOf(delivery: ClaimedDelivery): ClaimRef {
  return { id: delivery.id, leaseExpiresAt: delivery.lease_expires_at };
}

function resultLabel(answer: WebhookAnswer): string {
  if (answer.statusCode === null) return 'no_answer';
  return answer.statusCode >= 200 && answer.statusCode < 300 ? '2xx' : 'non_2xx';
}

export class WebhookSender {
  private readonly transport: WebhookTransport;
  private readonly recorder: GroupCommitter<DeliveryOutcome, void>;
  /** Decrypted API keys by key id: a key's secret never changes, and AES-GCM per attempt is waste. */
  private readonly keys = new Map<string, { encrypted: string; secret: string }>();
  private stopping = false;

  constructor(
    private readonly parts: SenderParts,
    readonly settings: WebhookSettings,
    private readonly masterKey: SecretKeys,
    allowPrivateTargets: boolean,
  ) {
    this.transport = new WebhookTransport({ timeoutMs: settings.timeoutMs, connectionsPerReceiver: settings.receiverConcurrency, allowPrivateTargets });
    this.recorder = new GroupCommitter(
      async (outcomes) => {
        await recordDeliveryOutcomes(parts.store, outcomes, parts.clock());
        return outcomes.map(() => undefined);
      },
      // PostgreSQL: the next group is written while the previous one commits (no row is shared between groups).
      // Outcomes wait a few milliseconds for company: far fewer commits, and nobody waits on them.
      { maxItems: 1000, maxWeight: 1000, weigh: () => 1, maxInFlight: parts.store.dialect === 'postgres' ? 2 : 1, lingerMs: 5 },
    );
  }

  /**
   * Claims up to `limit` due deliveries, leaving those addressed to `skipUrls` to other workers.
   * Deliveries whose key was revoked or lost its URL meanwhile are cancelled here, unsent.
   */
  async claim(limit: number, skipUrls: readonly string[]): Promise<WebhookJob[]> {
    const { store, clock } = this.parts;
    const claimed = await claimDueDeliveries(store, { now: clock(), limit, leaseMs: this.settings.leaseMs, skipUrls });
    if (claimed.length === 0) return [];
    const keys = new Map((await findSigningKeys(store.db, [...new Set(claimed.map((delivery) => delivery.api_key_id))])).map((key) => [key.id, key]));
    const jobs: WebhookJob[] = [];
    const cancelled: DeliveryOutcome[] = [];
    for (const delivery of claimed) {
      const key = keys.get(delivery.api_key_id);
      if (!key || key.revoked_at !== null) cancelled.push({ kind: 'cancelled', claim: claimOf(delivery), reason: REVOKED_KEY_REASON });
      else if (!key.webhook_url) cancelled.push({ kind: 'cancelled', claim: claimOf(delivery), reason: REMOVED_URL_REASON });
      else jobs.push({ delivery, signingKey: this.secretOf(key) });
    }
    if (cancelled.length > 0) await this.record(cancelled);
    return jobs;
  }

  private secretOf(key: SigningKey): string {
    const cached = this.keys.get(key.id);
    if (cached && cached.encrypted === key.encrypted_key) return cached.secret;
    const secret = decryptSecret(key.encrypted_key, this.masterKey);
    if (this.keys.size >= KEY_CACHE_LIMIT) this.keys.delete(this.keys.keys().next().value as string);
    this.keys.set(key.id, { encrypted: key.encrypted_key, secret });
    return secret;
  }

  /**
   * One attempt, not yet recorded (see record()): the receiver's answer turned into an outcome.
   * Never throws. A claim that waited too long for its turn (or a stopping worker) does not start
   * an attempt it might not finish before another worker can take the row: it is released instead.
   */
  async send(job: WebhookJob): Promise<DeliveryOutcome> {
    const { delivery } = job;
    const startedAt = this.parts.clock();
    if (this.stopping || delivery.lease_expires_at - startedAt < this.settings.timeoutMs + LEASE_MARGIN_MS) {
      return { kind: 'released', claim: claimOf(delivery), attempt: null };
    }
    const body = Buffer.from(delivery.body, 'utf8');
    const answer = await this.transport.post(
      {
        url: delivery.url,
        body,
        headers: { ...deliveryReportHeaders({ body, signingKey: job.signingKey, deliveryId: delivery.id }), [ATTEMPT_HEADER]: String(delivery.attempts) },
      },
    );
    if (!answer.aborted) this.parts.metrics.webhooks.attemptSeconds.observe({ result: resultLabel(answer) }, answer.latencyMs / 1000);
    return this.outcomeOf(delivery, answer, startedAt);
  }

  private outcomeOf(delivery: ClaimedDelivery, answer: WebhookAnswer, startedAt: number): DeliveryOutcome {
    const claim = claimOf(delivery);
    const log = (outcome: WebhookAttemptRow['outcome']): WebhookAttemptRow => ({
      delivery_id: delivery.id,
      id: createSortableId('att', startedAt),
      attempt: delivery.attempts,
      url: delivery.url,
      started_at: startedAt,
      latency_ms: answer.latencyMs,
      status_code: answer.statusCode,
      error: answer.error,
      outcome,
    });
    if (answer.aborted) return { kind: 'released', claim, attempt: log('released') };
    if (answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300) {
      return { kind: 'delivered', claim, statusCode: answer.statusCode, attempt: log('delivered') };
    }
    const error = answer.error ?? `HTTP ${answer.statusCode}`;
    // 1 for the first attempt since the delivery was created or last redelivered.
    const position = delivery.attempts - delivery.attempts_at_redelivery;
    const delay = this.settings.retryDelaysMs[position - 1];
    if (delay === undefined) {
      this.parts.log.warn({ delivery_id: delivery.id, message_id: delivery.message_id, attempts: delivery.attempts, error }, 'webhook delivery failed after its last retry');
      return { kind: 'failed', claim, statusCode: answer.statusCode, error, attempt: log('failed') };
    }
    this.parts.log.debug({ delivery_id: delivery.id, attempt: delivery.attempts, error, retry_in_ms: delay }, 'webhook attempt refused; will retry');
    return { kind: 'retry', claim, nextAttemptAt: this.parts.clock() + delay, statusCode: answer.statusCode, error, attempt: log('retry') };
  }

  /** Gives claimed deliveries back unattempted: due again at once, for this or another worker. */
  async release(jobs: readonly WebhookJob[]): Promise<void> {
    await this.record(jobs.map((job) => ({ kind: 'released', claim: claimOf(job.delivery), attempt: null })));
  }

  /**
   * Writes outcomes (grouped with those of concurrent attempts into one transaction). The attempts
   * have happened: losing their outcomes would send them again once the lease runs out, so a failed
   * write (a dropped connection, a busy database) is retried first.
   */
  async record(outcomes: readonly DeliveryOutcome[]): Promise<void> {
    await Promise.all(
      outcomes.map(async (outcome) => {
        await retryWrite(
          () => this.recorder.submit(outcome),
          (error, attempt) => this.parts.log.warn({ err: error, attempt, delivery_id: outcome.claim.id }, 'recording a webhook outcome failed; retrying'),
        );
        this.parts.metrics.webhooks.outcomes.inc({ outcome: outcome.kind });
      }),
    );
  }

  /** Cuts the attempts in flight short (their deliveries are released, uncounted): the end of a graceful stop. */
  abortInFlight(): void {
    this.stopping = true;
    this.transport.abortAll();
  }

  /** Writes what is still pending and closes the connections. */
  async close(): Promise<void> {
    await this.recorder.drain();
    await this.transport.close();
  }
}
