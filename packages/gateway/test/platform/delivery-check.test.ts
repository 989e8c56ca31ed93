/**
 * The delivery check (workers/delivery-checks/engine.ts): when the platform's delivery event never comes,
 * a worker asks ZNS's status endpoint about the overdue sent message by its provider msg_id. Delivered
 * there → delivered here, with the platform's delivery time and one customer report; a late event
 * for it changes nothing more. Not delivered → it stays sent and is asked again later.
 */
import { signEvent } from '@tms/zns-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT } from '../../src/services/demo.ts';
import { STORE_KINDS, httpRequest } from '../harness.ts';
import { messageIdOf, startWebhookStack, verifyHook, waitFor, type WebhookStack } from '../webhooks/support.ts';

describe.each(STORE_KINDS)('delivery check through the platform status endpoint (%s)', (kind) => {
  let stack: WebhookStack;

  beforeAll(async () => {
    stack = await startWebhookStack(kind, { env: { TMS_DELIVERY_CHECK_AFTER_MS: '300' } });
    // Every delivery event is lost on the way: only the status endpoint can tell.
    stack.simulator.control.setEvents({ drop_rate: 1 });
    stack.simulator.control.setRecipientRules([{ suffix: '999', result: 'never_deliver' }]);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('marks an overdue sent message delivered from the status endpoint and sends one report', async () => {
    const id = await stack.send();
    const record = await waitFor(() => stack.message(id), (message) => message.status === 'delivered', 'the delivery check to deliver the message');
    const platformMessage = stack.simulator.control.message(record.provider_msg_id)!;
    expect(platformMessage.status).toBe(1);
    expect(Date.parse(record.delivered_at)).toBe(platformMessage.delivery_time);
    // No event was ever attempted for it: the delivery came from the status endpoint.
    expect(stack.simulator.control.eventAttempts().filter((attempt) => attempt.msg_id === record.provider_msg_id)).toEqual([]);

    const hooks = await waitFor(() => stack.receiver.hooks.filter((hook) => messageIdOf(hook) === id), (found) => found.length === 1, 'the delivery report');
    expect(verifyHook(hooks[0]!, stack.key.key)).toMatchObject({ message_id: id, status: 'SUCCESS', tracking_id: record.provider_msg_id, delivered_at: record.delivered_at });

    // The platform's event, late: applied once already (same key), so no second report.
    const timestamp = String(Date.now());
    const raw = JSON.stringify({
      app_id: DEMO_SENDER_ACCOUNT.app_id,
      event_name: 'user_received_message',
      sender: { id: DEMO_SENDER_ACCOUNT.oa_id },
      recipient: { id: '84912345678' },
      message: { msg_id: record.provider_msg_id, delivery_time: String(platformMessage.delivery_time), tracking_id: id },
      timestamp,
    });
    const late = await httpRequest(stack.gateway.url, 'POST', '/platform/zns/events', {
      rawBody: raw,
      headers: { 'content-type': 'application/json', 'x-zevent-signature': `mac=${signEvent(DEMO_SENDER_ACCOUNT.app_id, raw, timestamp, DEMO_SENDER_ACCOUNT.oa_secret_key)}` },
    });
    expect(late.status).toBe(200);
    expect((await stack.message(id)).delivered_at).toBe(record.delivered_at);
    expect(stack.receiver.hooks.filter((hook) => messageIdOf(hook) === id)).toHaveLength(1);
  });

  it('leaves a message the platform has not delivered sent, and notes that it asked', async () => {
    const id = await stack.send({ phone: '0912345999' });
    const checked = await waitFor(
      () => stack.gateway.runtime.store.db.selectFrom('message_states').select(['status', 'status_checked_at']).where('id', '=', id).executeTakeFirstOrThrow(),
      (row) => row.status_checked_at !== null,
      'the delivery check to ask about the message',
    );
    expect(checked.status).toBe('sent');
    expect((await stack.message(id)).delivered_at).toBeNull();
    expect(stack.receiver.hooks.filter((hook) => messageIdOf(hook) === id)).toHaveLength(0);
  });

  it('stops between lookups: those in flight finish and are noted, the rest are left for the next run', async () => {
    const count = 40;
    const ids = await Promise.all(Array.from({ length: count }, (_, index) => stack.send({ phone: `0913${String(index).padStart(3, '0')}999` })));
    const rowsOf = () => stack.gateway.runtime.store.db.selectFrom('message_states').select(['status', 'status_checked_at']).where('id', 'in', ids).execute();
    await waitFor(rowsOf, (rows) => rows.every((row) => row.status === 'sent'), 'every message sent');
    // A slow status endpoint: one run over these messages takes many rounds of lookups.
    stack.simulator.control.setFaults({ latency_ms: 1000, scope: 'business' });
    // Some may have been asked already, before the platform slowed down: only later lookups count.
    const slowSince = Date.now();
    const lookups = () => Object.entries(stack.simulator.control.stats().requests.by_route).reduce((sum, [route, hits]) => (route.includes('message/status') ? sum + hits : sum), 0);
    const before = lookups();
    // Eight lookups at once: the run over these messages is under way (the earlier test's message alone asks one at a time).
    await waitFor(lookups, (made) => made >= before + 8, 'the check to ask the platform about these messages');

    await stack.gateway.service.worker!.stop();
    const asked = (await rowsOf()).filter((row) => row.status_checked_at !== null && row.status_checked_at >= slowSince).length;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan(count);
    expect(lookups() - before).toBeLessThan(count);
    stack.simulator.control.clearFaults();
  });
});
