/**
 * Applies verified delivery events (user_received_message): marks the message delivered and writes
 * the customer's delivery report (docs/api.md, delivery reports) into the webhook outbox, in one
 * transaction, so a report exists exactly when the message is delivered. The message's own state
 * makes an event idempotent: only a queued, sending or sent message can become delivered, so a
 * retried event changes nothing and no record of the event is kept (a row per delivered message,
 * never read again, was about a sixth of a PostgreSQL store grown to 5,000,000 messages).
 *
 * Events that arrive together share one transaction of a few statements (group commit): one
 * commit (one fsync on SQLite) and five statements for many events (six when one of them erases
 * an RSA ciphertext), the first of which finds the messages they name, instead of a lookup
 * and a transaction of four statements per event, which limited the whole pipeline (on
 * PostgreSQL, the lookup of each event alone cost its server more than a fifth of its CPU in the
 * full loop). At most two groups are written at once on PostgreSQL, so a burst of events cannot
 * take every pooled connection from the API. A group locks its messages in one UPDATE; should that
 * ever deadlock with the dispatcher's own multi-row UPDATE, PostgreSQL aborts one and
 * runInTransaction retries it.
 */
import { GroupCommitter } from '../lib/group-commit.ts';
import { createSortableId } from '../lib/ids.ts';
import { formatUtc } from '../lib/vietnam-time.ts';
import { runInTransaction, type Dialect, type Store, type Transaction } from '../store/database.ts';
import { findWebhookTargets, insertWebhookDeliveries, markMessagesDelivered, type DeliveredMessage } from '../store/delivery-events.ts';
import { findEventMessages, type EventMessageReference } from '../store/platform-events.ts';
import type { WebhookDeliveryRow } from '../store/schema.ts';
import { DELIVERY_ID_PREFIX } from '../store/webhook-deliveries.ts';

export interface DeliveryEvent {
  /** Our message, by its id or as the platform names it (EventMessageReference). */
  message: EventMessageReference;
  platformMsgId: string;
  oaId: string;
  deliveredAt: number;
  now: number;
}

export type DeliveryEventResult =
  /** The message became delivered (and its report was queued when its key has a webhook URL). */
  | 'delivered'
  /** A repeat of an earlier event of its group (same message, same platform msg_id). */
  | 'duplicate'
  /** The message is failed or already delivered (as a retried event finds it): left as it is. */
  | 'not_deliverable'
  /** No message of the sender account's workspace and OA matches the event. */
  | 'unknown_message';

/** The delivery report (docs/api.md), serialised once: the outbox resends these exact bytes. */
export function deliveryReportBody(message: DeliveredMessage, deliveredAt: number, platformMsgId: string): string {
  return JSON.stringify({
    message_id: message.id,
    client_req_id: message.tracking_id,
    from: message.oa_id,
    to: message.phone,
    status: 'SUCCESS',
    delivered_at: formatUtc(deliveredAt),
    tracking_id: message.provider_msg_id ?? platformMsgId,
  });
}

/**
 * A group of events in one transaction, with the outcome each would have had applied one after
 * the other: the first of two identical events is applied and the second is a duplicate; of two
 * events for one message, the first delivers it and the second finds it delivered.
 */
export async function applyDeliveryEvents(trx: Transaction, dialect: Dialect, events: readonly DeliveryEvent[], now: number): Promise<DeliveryEventResult[]> {
  const messageIds = await findEventMessages(trx, dialect, events);
  const results: DeliveryEventResult[] = messageIds.map((messageId) => (messageId === null ? 'unknown_message' : 'not_deliverable'));
  /** Per message, the index of its first event in the group: the one that may deliver it. */
  const deciding = new Map<string, number>();
  const seen = new Set<string>();
  messageIds.forEach((messageId, index) => {
    if (messageId === null) return;
    const eventKey = `${messageId}\u0000${events[index]!.platformMsgId}`;
    if (seen.has(eventKey)) results[index] = 'duplicate';
    seen.add(eventKey);
    if (!deciding.has(messageId)) deciding.set(messageId, index);
  });
  const changes = [...deciding].map(([messageId, index]) => {
    const event = events[index]!;
    return { id: messageId, deliveredAt: event.deliveredAt, providerMsgId: event.platformMsgId };
  });
  const delivered = await markMessagesDelivered(trx, dialect, changes, now);
  const targets = await findWebhookTargets(trx, [...new Set(delivered.map((message) => message.api_key_id))]);
  const reports: WebhookDeliveryRow[] = [];
  for (const message of delivered) {
    const event = events[deciding.get(message.id)!]!;
    results[deciding.get(message.id)!] = 'delivered';
    const target = targets.get(message.api_key_id);
    if (!target || target.revoked_at !== null || !target.webhook_url) continue;
    reports.push({
      id: createSortableId(DELIVERY_ID_PREFIX, event.now),
      message_id: message.id,
      workspace_id: message.workspace_id,
      api_key_id: message.api_key_id,
      url: target.webhook_url,
      body: deliveryReportBody(message, event.deliveredAt, event.platformMsgId),
      status: 'pending',
      attempts: 0,
      attempts_at_redelivery: 0,
      next_attempt_at: event.now,
      lease_expires_at: null,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
      failed_at: null,
      created_at: event.now,
      updated_at: event.now,
    });
  }
  await insertWebhookDeliveries(trx, dialect, reports);
  return results;
}

export type DeliveryEventWriter = GroupCommitter<DeliveryEvent, DeliveryEventResult>;

const GROUP_LINGER_MS = 5;

/** The process's writer: groups form across all requests of the process. */
export function createDeliveryEventWriter(store: Store): DeliveryEventWriter {
  return new GroupCommitter<DeliveryEvent, DeliveryEventResult>(
    async (events) => runInTransaction(store, (trx) => applyDeliveryEvents(trx, store.dialect, events, events[0]!.now)),
    // The platform waits a few milliseconds longer for its answer; commits are far fewer.
    { maxItems: 500, maxWeight: 500, weigh: () => 1, maxInFlight: store.dialect === 'sqlite' ? 1 : 2, lingerMs: GROUP_LINGER_MS },
  );
}
