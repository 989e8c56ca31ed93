/**
 * A delivery report of a workspace written straight into the store's outbox, for tests that need a
 * report in a given state without waiting for the real chain (security checks, another workspace's
 * report). The row is written with the store's own insert, as the delivery-event writer does.
 */
import { createSortableId } from '../../src/lib/ids.ts';
import { insertWebhookDeliveries } from '../../src/store/delivery-events.ts';
import type { WebhookDeliveryStatus } from '../../src/store/schema.ts';
import type { TestGateway } from '../harness.ts';

export async function insertDelivery(
  gateway: TestGateway,
  input: { workspaceId: string; apiKeyId: string; url: string; status: WebhookDeliveryStatus; messageId?: string },
): Promise<string> {
  const now = Date.now();
  const id = createSortableId('dlv', now);
  const messageId = input.messageId ?? createSortableId('msg', now);
  const finished = input.status === 'pending' ? null : now;
  await insertWebhookDeliveries(gateway.runtime.store.db, gateway.runtime.store.dialect, [
    {
      id,
      message_id: messageId,
      workspace_id: input.workspaceId,
      api_key_id: input.apiKeyId,
      url: input.url,
      body: JSON.stringify({ message_id: messageId, status: 'SUCCESS' }),
      status: input.status,
      attempts: input.status === 'pending' ? 0 : 6,
      attempts_at_redelivery: 0,
      // A pending fixture is not due for an hour: no worker attempts it during a test.
      next_attempt_at: now + 3_600_000,
      lease_expires_at: null,
      last_status_code: input.status === 'failed' ? 500 : null,
      last_error: input.status === 'failed' ? 'HTTP 500' : null,
      delivered_at: input.status === 'delivered' ? finished : null,
      failed_at: input.status === 'failed' ? finished : null,
      created_at: now,
      updated_at: now,
    },
  ]);
  return id;
}
