import type { Static } from 'typebox';
import type { ConsoleDeliveryPage, DeliveryDetail } from '../../services/console/webhook-deliveries.ts';
import type { WebhookDeliveryRow } from '../../services/vocabulary.ts';
import type { ConsoleDeliveryDetailSchema, ConsoleDeliverySchema } from '../routes/console/access-schemas.ts';
import { presentAttempt, presentDelivery } from './webhook-deliveries.ts';

/** The operator's view of a delivery without the workspace (always the caller's own). */
export function presentConsoleDelivery(row: WebhookDeliveryRow): Static<typeof ConsoleDeliverySchema> {
  const { workspace_id: _workspace, ...delivery } = presentDelivery(row);
  return delivery;
}

/** A delivery with the exact body and headers it is sent with, and its attempt log. */
export function presentConsoleDeliveryDetail(detail: DeliveryDetail): Static<typeof ConsoleDeliveryDetailSchema> {
  return { ...presentConsoleDelivery(detail.delivery), body: detail.delivery.body, headers: detail.headers, attempt_log: detail.attempts.map(presentAttempt) };
}

export function presentConsoleDeliveryPage(page: ConsoleDeliveryPage) {
  return { deliveries: page.deliveries.map(presentConsoleDelivery), count: page.deliveries.length, has_more: page.hasMore };
}
