/**
 * The delivery check: ZNS delivery events are at least once in principle, but an event the
 * platform gave up on (our endpoint down past its last retry, a lost webhook setting) would leave
 * a message `sent` for ever and its customer without a delivery report. So a worker asks the
 * platform's status endpoint (`GET /message/status`, by the provider msg_id every sent message
 * has) about sent messages whose event is overdue. A delivered answer goes through the same
 * writer as an event, which delivers only a message not delivered yet, so a late event changes
 * nothing more and the customer gets one report either way.
 */
import { Semaphore } from '../../lib/semaphore.ts';
import { findMessagesAwaitingDelivery, markStatusChecked, type MessageAwaitingDelivery } from '../../store/delivery-checks.ts';
import type { ServiceParts } from '../../services/context.ts';
import type { AccessTokens } from '../../caches/access-tokens.ts';

export interface DeliveryCheckSettings {
  /** How long after sending an event counts as overdue; also the pause between checks of one message. */
  afterMs: number;
  /** Messages sent longer ago than this are no longer checked (ZNS drops undelivered messages). */
  maxAgeMs: number;
  /** Messages checked per run. */
  batchSize: number;
}

/** Status lookups in flight at once: the status endpoint shares the OA's rate with sending. */
const LOOKUPS_IN_FLIGHT = 8;
const DELIVERED = 1;

export interface DeliveryCheckResult {
  checked: number;
  delivered: number;
}

type DeliveryCheckParts = Pick<ServiceParts, 'store' | 'clock' | 'log' | 'platform' | 'metrics' | 'deliveryEventWriter'>;

type CheckOutcome = 'delivered' | 'not_delivered' | 'lookup_failed' | 'not_asked';

export async function checkOverdueDeliveries(
  parts: DeliveryCheckParts,
  tokens: Pick<AccessTokens, 'accessTokenFor'>,
  settings: DeliveryCheckSettings,
  /** `progress` is told after each lookup; once `stopping` is aborted, no lookup starts. */
  run: { progress?: () => void; stopping?: AbortSignal } = {},
): Promise<DeliveryCheckResult> {
  const now = parts.clock();
  const overdue = await findMessagesAwaitingDelivery(parts.store.db, {
    sentAfter: now - settings.maxAgeMs,
    sentBefore: now - settings.afterMs,
    checkedBefore: now - settings.afterMs,
    limit: settings.batchSize,
  });
  const limit = new Semaphore(LOOKUPS_IN_FLIGHT);
  const outcomes = await Promise.all(
    overdue.map((message) =>
      limit.run(async () => {
        if (run.stopping?.aborted) return 'not_asked';
        const outcome = await checkOne(parts, tokens, message);
        run.progress?.();
        return outcome;
      }),
    ),
  );
  const delivered = outcomes.filter((outcome) => outcome === 'delivered').length;
  // Every message asked about waits afterMs before it is asked again, whatever the answer was;
  // one the stop kept from being asked is asked by the next run.
  const asked = (outcome: CheckOutcome): boolean => outcome === 'not_delivered' || outcome === 'lookup_failed';
  await markStatusChecked(parts.store.db, overdue.filter((_message, index) => asked(outcomes[index]!)).map((message) => message.id), parts.clock());
  return { checked: outcomes.filter((outcome) => outcome !== 'not_asked').length, delivered };
}

async function checkOne(
  parts: DeliveryCheckParts,
  tokens: Pick<AccessTokens, 'accessTokenFor'>,
  message: MessageAwaitingDelivery,
): Promise<Exclude<CheckOutcome, 'not_asked'>> {
  const platformMsgId = message.provider_msg_id!;
  try {
    const token = await tokens.accessTokenFor(message.oa_id);
    const answer = await parts.platform.getMessageStatus(token, platformMsgId);
    if (!answer.ok) {
      parts.metrics.platformErrors.inc({ code: String(answer.code), call: 'status' });
      parts.log.warn({ msg_id: message.id, code: answer.code }, 'delivery status lookup refused by the platform');
      return 'lookup_failed';
    }
    if (answer.data.status !== DELIVERED || answer.data.deliveryTime === null) return 'not_delivered';
    const result = await parts.deliveryEventWriter.submit({
      message: { id: message.id },
      platformMsgId,
      oaId: message.oa_id,
      deliveredAt: answer.data.deliveryTime,
      now: parts.clock(),
    });
    if (result === 'delivered') parts.metrics.delivered.inc();
    return result === 'delivered' ? 'delivered' : 'not_delivered';
  } catch (error) {
    // A platform outage or a sender account needing re-login: the next run asks again.
    parts.log.warn({ err: error, msg_id: message.id }, 'delivery status lookup failed');
    return 'lookup_failed';
  }
}
