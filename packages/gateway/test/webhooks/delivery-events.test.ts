/**
 * Delivery events applied in groups (one transaction for the events that arrive together): each
 * event has the outcome it would have had alone, and a delivered message has exactly one report in
 * the outbox, also when the platform sends the same event many times at once. Signed events are
 * posted over HTTP concurrently; the group function is also called directly on a crafted group.
 * Direct store access: test setup (moving messages to sent/failed) and reading the outbox.
 * SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { signEvent } from '@tms/zns-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDeliveryEvents } from '../../src/infrastructure/delivery-event-writer.ts';
import type { EventMessageReference } from '../../src/store/platform-events.ts';
import { runInTransaction } from '../../src/store/database.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { createHookKey, expectOk } from './support.ts';

describe.each(STORE_KINDS)('delivery events applied in groups (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let hookKey: { id: string; key: string };
  const appId = `app-${randomBytes(4).toString('hex')}`;
  const secret = `oa-secret-${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway);
    expectOk(
      await gateway.admin('PUT', `/workspaces/${ws.workspaceId}/sender-accounts/${ws.oaId}?verify=false`, {
        name: 'OA',
        daily_quota: 100_000,
        app_id: appId,
        app_secret: 'app-secret',
        refresh_token: 'refresh-token',
        oa_secret_key: secret,
      }),
      'connect with a secret',
    );
    // No worker runs here: the URL is never called.
    hookKey = await createHookKey(gateway, ws.workspaceId, 'http://127.0.0.1:9/hook');
  });
  afterAll(async () => gateway?.close());

  const db = () => gateway.runtime.store.db;

  async function sentMessage(): Promise<{ id: string; providerId: string }> {
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: hookKey.key, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } });
    const id = expectOk(response, 'send').body.msg_id as string;
    const providerId = randomBytes(10).toString('hex');
    await db().updateTable('message_states').set({ status: 'sent', provider_msg_id: providerId, sent_at: Date.now() }).where('id', '=', id).execute();
    return { id, providerId };
  }

  function signedEvent(message: { id: string }, platformMsgId: string, deliveryTime = Date.now() - 1000): { raw: string; signature: string } {
    const timestamp = String(Date.now());
    const raw = JSON.stringify({
      app_id: appId,
      event_name: 'user_received_message',
      sender: { id: ws.oaId },
      recipient: { id: '84912345678' },
      message: { msg_id: platformMsgId, delivery_time: String(deliveryTime), tracking_id: message.id },
      timestamp,
    });
    return { raw, signature: `mac=${signEvent(appId, raw, timestamp, secret)}` };
  }

  const outbox = (messageIds: string[]) => db().selectFrom('webhook_deliveries').select(['message_id', 'body']).where('message_id', 'in', messageIds).execute();

  it('many events at once, each sent several times: every message delivered once, with one report', async () => {
    const messages = await Promise.all(Array.from({ length: 30 }, () => sentMessage()));
    const events = messages.flatMap((message) => {
      const event = signedEvent(message, message.providerId);
      return [event, event, event];
    });
    const answers = await Promise.all(
      events.map((event) => gateway.request('POST', '/platform/zns/events', { rawBody: event.raw, headers: { 'content-type': 'application/json', 'x-zevent-signature': event.signature } })),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const rows = await outbox(messages.map((message) => message.id));
    expect(rows).toHaveLength(messages.length);
    for (const message of messages) {
      const record = (await gateway.request('GET', `/api/v1/messages/${message.id}`, { key: hookKey.key })).body;
      expect(record).toMatchObject({ status: 'delivered', provider_msg_id: message.providerId });
      const report = JSON.parse(rows.find((row) => row.message_id === message.id)!.body);
      expect(report).toMatchObject({ message_id: message.id, status: 'SUCCESS', tracking_id: message.providerId, delivered_at: record.delivered_at });
    }
  });

  it('delivers a message once when two transactions apply its event at the same time', async () => {
    const messages = await Promise.all(Array.from({ length: 10 }, () => sentMessage()));
    const now = Date.now();
    const group = messages.map((message, index) => ({
      message: { trackingId: message.id, workspaceId: ws.workspaceId },
      platformMsgId: message.providerId,
      oaId: ws.oaId,
      deliveredAt: 1_767_200_401_000 + index,
      now,
    }));
    // On PostgreSQL the two commit side by side and meet on each message's row lock; the second
    // finds every message delivered by then. SQLite runs them one after the other.
    const [first, second] = await Promise.all(
      [group, [...group].reverse()].map((events) => runInTransaction(gateway.runtime.store, (trx) => applyDeliveryEvents(trx, gateway.runtime.store.dialect, events, now))),
    );
    for (const [index, message] of messages.entries()) {
      const outcomes = [first![index], second![messages.length - 1 - index]].sort();
      expect(outcomes, message.id).toEqual(['delivered', 'not_deliverable']);
    }
    expect(await outbox(messages.map((message) => message.id))).toHaveLength(messages.length);
  });

  it('gives each event of a group the outcome it would have had alone', async () => {
    const a = await sentMessage();
    const b = await sentMessage();
    const failed = await sentMessage();
    await db().updateTable('message_states').set({ status: 'failed', failed_at: Date.now() }).where('id', '=', failed.id).execute();
    // Named as a platform event names them: our msg_id as tracking_id, or only the platform's msg_id.
    const byProviderId = await sentMessage();
    const otherWorkspaces = await sentMessage();
    const now = Date.now();
    const event = (message: EventMessageReference, platformMsgId: string, deliveredAt: number) => ({ message, platformMsgId, oaId: ws.oaId, deliveredAt, now });
    const ours = (message: { id: string }): EventMessageReference => ({ trackingId: message.id, workspaceId: ws.workspaceId });
    const resendId = randomBytes(10).toString('hex');
    const group = [
      event(ours(a), a.providerId, 1_767_200_401_000),
      event(ours(a), a.providerId, 1_767_200_401_000),
      event({ id: b.id }, b.providerId, 1_767_200_402_000),
      // Another platform msg_id for a (a resend): a is delivered by then; then that event again.
      event(ours(a), resendId, 1_767_200_403_000),
      event(ours(a), resendId, 1_767_200_403_000),
      event(ours(failed), failed.providerId, 1_767_200_404_000),
      event({ trackingId: null, workspaceId: ws.workspaceId }, byProviderId.providerId, 1_767_200_405_000),
      // No such message; one of this workspace's named by an account of another workspace, by either id.
      event(ours({ id: 'msg_00000000000000000000000000' }), randomBytes(10).toString('hex'), 1_767_200_406_000),
      event({ trackingId: otherWorkspaces.id, workspaceId: 'ws_another' }, otherWorkspaces.providerId, 1_767_200_407_000),
      event({ trackingId: null, workspaceId: 'ws_another' }, otherWorkspaces.providerId, 1_767_200_408_000),
    ];
    const results = await runInTransaction(gateway.runtime.store, (trx) => applyDeliveryEvents(trx, gateway.runtime.store.dialect, group, now));
    expect(results).toEqual(['delivered', 'duplicate', 'delivered', 'not_deliverable', 'duplicate', 'not_deliverable', 'delivered', 'unknown_message', 'unknown_message', 'unknown_message']);
    const touched = [a.id, b.id, failed.id, byProviderId.id, otherWorkspaces.id];
    const rows = await outbox(touched);
    expect(rows.map((row) => row.message_id).sort()).toEqual([a.id, b.id, byProviderId.id].sort());
    expect(JSON.parse(rows.find((row) => row.message_id === a.id)!.body).delivered_at).toBe('2025-12-31T17:00:01.000Z');
    const statusOf = async (id: string) => (await db().selectFrom('message_states').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    expect(await statusOf(otherWorkspaces.id)).toBe('sent');
    // Applied again (the platform's retry of the whole group): nothing new. Each message is
    // delivered or failed by then, and the repeats within the group are still duplicates. The
    // event naming only the platform's msg_id finds no sent message with it any more, as when it
    // came alone.
    const again = await runInTransaction(gateway.runtime.store, (trx) => applyDeliveryEvents(trx, gateway.runtime.store.dialect, group, now));
    expect(again).toEqual(['not_deliverable', 'duplicate', 'not_deliverable', 'not_deliverable', 'duplicate', 'not_deliverable', 'unknown_message', 'unknown_message', 'unknown_message', 'unknown_message']);
    expect(await outbox(touched)).toHaveLength(3);
  });
});
