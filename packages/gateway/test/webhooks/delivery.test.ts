/**
 * Delivery-report webhooks end to end (docs/api.md, delivery reports): a message sent
 * through the API is dispatched to the ZNS simulator, its signed delivery event marks it delivered,
 * and the webhook sender POSTs the report to a real receiver, which checks the signature on its own
 * over the raw bytes. Retries along the (shortened) ladder; duplicate platform events; metrics.
 * SQLite and PostgreSQL.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT } from '../../src/services/demo.ts';
import { STORE_KINDS } from '../harness.ts';
import { ISO_UTC_MS } from '../api/helpers.ts';
import { TEST_RETRY_DELAYS_MS, createHookKey, eventsTo, hooksFor, startReceiver, startWebhookStack, verifyHook, waitFor, type WebhookStack } from './support.ts';

const REPORT_KEYS = ['message_id', 'client_req_id', 'from', 'to', 'status', 'delivered_at', 'tracking_id'];

describe.each(STORE_KINDS)('delivery-report webhooks (%s)', (kind) => {
  let stack: WebhookStack;

  beforeAll(async () => {
    stack = await startWebhookStack(kind);
  });
  afterAll(async () => stack?.close());
  beforeEach(() => stack.receiver.respond(() => ({ status: 200, body: 'ok' })));

  const delivery = async (messageId: string) => {
    const list = await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}&limit=500`);
    expect(list.status, list.text).toBe(200);
    const found = list.body.deliveries.find((row: { message_id: string }) => row.message_id === messageId);
    if (!found) return undefined;
    const detail = await stack.gateway.admin('GET', `/webhook-deliveries/${found.id}`);
    expect(detail.status, detail.text).toBe(200);
    return detail.body;
  };

  it('POSTs the section-6 report once, signed over the exact bytes with the API key, with the delivery id and attempt', async () => {
    const msgId = await stack.send({ tracking_id: 'order-88213' });
    const [hook] = await waitFor(() => hooksFor(stack.receiver, msgId), (hooks) => hooks.length >= 1, 'the report');
    const report = verifyHook(hook!, stack.key.key);
    const message = await waitFor(() => stack.message(msgId), (record) => record.status === 'delivered', 'delivered');

    expect(hook!.path).toBe('/hook');
    expect(hook!.headers['content-type']).toBe('application/json');
    expect(hook!.headers['x-gateway-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(hook!.headers['x-gateway-delivery-id']).toMatch(/^dlv_[0-9A-Z]{26}$/);
    expect(hook!.headers['x-gateway-attempt']).toBe('1');
    expect(Object.keys(report)).toEqual(REPORT_KEYS);
    expect(report).toEqual({
      message_id: msgId,
      client_req_id: 'order-88213',
      from: DEMO_SENDER_ACCOUNT.oa_id,
      to: message.phone,
      status: 'SUCCESS',
      delivered_at: message.delivered_at,
      tracking_id: message.provider_msg_id,
    });
    expect(report.delivered_at).toMatch(ISO_UTC_MS);
    expect(report.to).toMatch(/^84\d{9}$/);
    // Compact JSON, serialised once: what the outbox stores is what went on the wire.
    expect(hook!.raw.toString('utf8')).toBe(JSON.stringify(report));

    const row = await waitFor(() => delivery(msgId), (found) => found?.status === 'delivered', 'the delivery to be recorded');
    expect(row).toMatchObject({ id: hook!.headers['x-gateway-delivery-id'], status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, url: stack.receiver.url() });
    expect(row.body).toBe(hook!.raw.toString('utf8'));
    expect(row.attempt_log).toEqual([
      { attempt: 1, started_at: expect.stringMatching(ISO_UTC_MS), url: stack.receiver.url(), status_code: 200, latency_ms: expect.any(Number), error: null, outcome: 'delivered' },
    ]);
    expect(hooksFor(stack.receiver, msgId)).toHaveLength(1);
  });

  it('reports an RSA message with "to": null', async () => {
    const msgId = await stack.sendRsa('rsa-report');
    const [hook] = await waitFor(() => hooksFor(stack.receiver, msgId), (hooks) => hooks.length >= 1, 'the RSA report');
    const report = verifyHook(hook!, stack.key.key);
    expect(Object.keys(report)).toEqual(REPORT_KEYS);
    expect(report).toMatchObject({ message_id: msgId, client_req_id: 'rsa-report', to: null, status: 'SUCCESS' });
  });

  it('uses the msg_id as client_req_id when the client gave no tracking_id, and signs each key\'s reports with that key', async () => {
    const other = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/other'));
    const mine = await stack.send();
    const theirs = await stack.send({}, other);
    const [mineHook] = await waitFor(() => hooksFor(stack.receiver, mine), (hooks) => hooks.length >= 1, 'the first key\'s report');
    const [theirHook] = await waitFor(() => hooksFor(stack.receiver, theirs), (hooks) => hooks.length >= 1, 'the second key\'s report');
    expect(verifyHook(mineHook!, stack.key.key)).toMatchObject({ message_id: mine, client_req_id: mine });
    expect(verifyHook(theirHook!, other.key)).toMatchObject({ message_id: theirs, client_req_id: theirs });
    expect(theirHook!.path).toBe('/other');
    expect(() => verifyHook(theirHook!, stack.key.key)).toThrow(/bad signature/);
  });

  it('retries a 500, a timeout, a dropped connection and a redirect (never followed) along the ladder, resending the same bytes and signature', async () => {
    const elsewhere = await startReceiver();
    try {
      stack.receiver.respond((hook) => {
        const attempt = Number(hook.headers['x-gateway-attempt']);
        if (attempt === 1) return { status: 500, body: 'database down' };
        if (attempt === 2) return { hang: true };
        if (attempt === 3) return { drop: true };
        if (attempt === 4) return { status: 302, headers: { location: elsewhere.url() } };
        return { status: 204 };
      });
      const msgId = await stack.send();
      const hooks = await waitFor(() => hooksFor(stack.receiver, msgId), (found) => found.length >= 5, 'five attempts', 60_000);
      const row = await waitFor(() => delivery(msgId), (found) => found?.status === 'delivered', 'delivered after the retries');

      expect(hooks.map((hook) => hook.headers['x-gateway-attempt'])).toEqual(['1', '2', '3', '4', '5']);
      expect(new Set(hooks.map((hook) => hook.headers['x-gateway-delivery-id'])).size).toBe(1);
      expect(new Set(hooks.map((hook) => hook.headers['x-gateway-signature'])).size).toBe(1);
      for (const hook of hooks) {
        expect(hook.raw.equals(hooks[0]!.raw)).toBe(true);
        verifyHook(hook, stack.key.key);
      }
      // Each retry waits at least its delay after the previous attempt (lower bounds only).
      for (let index = 1; index < hooks.length; index += 1) {
        expect(hooks[index]!.at - hooks[index - 1]!.at).toBeGreaterThanOrEqual(TEST_RETRY_DELAYS_MS[index - 1]! - 5);
      }
      expect(elsewhere.hooks).toHaveLength(0);
      expect(row).toMatchObject({ status: 'delivered', attempts: 5, last_status_code: 204 });
      expect(row.attempt_log.map((attempt: { attempt: number; status_code: number | null; outcome: string }) => [attempt.attempt, attempt.status_code, attempt.outcome])).toEqual([
        [1, 500, 'retry'],
        [2, null, 'retry'],
        [3, null, 'retry'],
        [4, 302, 'retry'],
        [5, 204, 'delivered'],
      ]);
      const errors = row.attempt_log.map((attempt: { error: string | null }) => attempt.error);
      expect(errors[0]).toBe('HTTP 500: database down');
      expect(errors[1]).toMatch(/^timeout/);
      expect(errors[2]).toMatch(/socket|closed|reset|terminated/i);
      expect(errors[3]).toMatch(/^HTTP 302/);
      expect(errors[4]).toBeNull();
    } finally {
      await elsewhere.close();
    }
  });

  it('sends one report when the platform delivers its event twice', async () => {
    // Between the simulator and the gateway: every event is passed on, but the simulator is told
    // the first time that it failed, so it sends the same event again (its own retry).
    const seen = new Map<string, number>();
    const proxy = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const forwarded = await fetch(`${stack.gateway.url}/platform/zns/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-zevent-signature': String(request.headers['x-zevent-signature']) },
          body: raw,
        });
        await forwarded.arrayBuffer();
        const key = raw.toString('utf8');
        const count = (seen.get(key) ?? 0) + 1;
        seen.set(key, count);
        response.writeHead(count === 1 ? 500 : forwarded.status).end();
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    stack.simulator.control.setEvents({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/events` });
    try {
      const ids = await Promise.all([stack.send(), stack.send(), stack.send()]);
      await waitFor(() => [...seen.values()], (counts) => counts.length >= 3 && counts.every((count) => count >= 2), 'each event twice');
      for (const id of ids) await waitFor(() => hooksFor(stack.receiver, id), (hooks) => hooks.length >= 1, `the report of ${id}`);
      // A late duplicate would show up by now: the sender polls every 20 ms.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const id of ids) {
        expect(hooksFor(stack.receiver, id)).toHaveLength(1);
        expect((await delivery(id)).attempts).toBe(1);
      }
    } finally {
      eventsTo(stack.simulator, stack.gateway.url);
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('counts outcomes and attempt latency, and shows the outbox in /metrics', async () => {
    const response = await stack.gateway.request('GET', '/metrics', { key: stack.gateway.config.adminToken! });
    expect(response.status).toBe(200);
    expect(response.text).toMatch(/tms_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(response.text).toMatch(/tms_webhook_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(response.text).toMatch(/tms_webhook_attempt_duration_seconds_count\{result="2xx"\} [1-9]/);
    expect(response.text).toMatch(/tms_webhook_outbox_deliveries\{state="pending"\} \d+/);
    expect(response.text).toMatch(/tms_webhook_outbox_deliveries\{state="failed"\} \d+/);
    expect(response.text).toMatch(/tms_webhook_outbox_oldest_pending_age_seconds \d/);
  });
});
