/**
 * A graceful stop commits what the process's writers hold. A delivery event handed to the
 * delivery-event writer waits a few milliseconds for more to join its group; a stop that comes in
 * that moment must commit it (the message delivered, its report in the outbox) before the store
 * closes. Checked by reading the database again through a new store after the stop.
 * Direct store access: test setup (moving a message to sent) and reading the result.
 * SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { createHookKey } from '../webhooks/support.ts';

describe.each(STORE_KINDS)('graceful stop of the runtime (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let hookKey: { id: string; key: string };
  let reopened: Store | undefined;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway);
    // No worker runs here: the URL is never called.
    hookKey = await createHookKey(gateway, ws.workspaceId, 'http://127.0.0.1:9/hook');
  });
  afterAll(async () => {
    await reopened?.close();
    await gateway?.close();
  });

  it('commits a delivery-event group that is still waiting when the stop begins', async () => {
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: hookKey.key, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } });
    expect(response.status).toBe(202);
    const messageId = response.body.msg_id as string;
    const platformMsgId = randomBytes(10).toString('hex');
    await gateway.runtime.store.db.updateTable('message_states').set({ status: 'sent', provider_msg_id: platformMsgId, sent_at: Date.now() }).where('id', '=', messageId).execute();

    const submitted = gateway.runtime.deliveryEventWriter.submit({ message: { trackingId: messageId, workspaceId: ws.workspaceId }, platformMsgId, oaId: ws.oaId, deliveredAt: Date.now() - 1000, now: Date.now() });
    await gateway.runtime.close();
    expect(await submitted).toBe('delivered');

    reopened = openStore(gateway.config.database);
    const message = await reopened.db.selectFrom('message_states').select(['status', 'delivered_at']).where('id', '=', messageId).executeTakeFirstOrThrow();
    expect(message.status).toBe('delivered');
    const reports = await reopened.db.selectFrom('webhook_deliveries').select(['message_id', 'status']).where('message_id', '=', messageId).execute();
    expect(reports).toEqual([{ message_id: messageId, status: 'pending' }]);
  });
});
