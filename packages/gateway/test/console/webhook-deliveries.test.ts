/**
 * Delivery reports in the console, through the whole real chain (gateway with workers, the ZNS
 * simulator posting delivery events, a customer receiver): the workspace's reports with the exact
 * body and headers the receiver got, their attempts, redelivery of one and of every failure since a
 * time, and nothing of another workspace's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';
import { expectOk, hooksFor, startReceiver, startWebhookStack, waitFor, type WebhookStack } from '../webhooks/support.ts';
import { insertDelivery } from './delivery-fixtures.ts';

describe.each(STORE_KINDS)('console webhook deliveries (%s)', (kind) => {
  let stack: WebhookStack;
  let developer: ConsoleSession;
  let owner: ConsoleSession;
  /** Whether the stack's receiver refuses (500) or accepts (200) reports. */
  let refusing = false;

  beforeAll(async () => {
    stack = await startWebhookStack(kind, { responder: () => (refusing ? { status: 500, body: 'maintenance' } : { status: 200, body: 'ok' }) });
    developer = await consoleUserIn(stack.gateway, stack.workspaceId, 'developer');
    owner = await consoleUserIn(stack.gateway, stack.workspaceId, 'owner');
  });
  afterAll(async () => stack?.close());

  const deliveryOf = async (messageId: string) =>
    waitFor(
      async () => (await developer.request('GET', '/console/api/webhook-deliveries?limit=200')).body.deliveries.find((delivery: any) => delivery.message_id === messageId),
      (delivery) => delivery !== undefined,
      `the report of ${messageId}`,
    );
  const detailOf = async (id: string) => expectOk(await developer.request('GET', `/console/api/webhook-deliveries/${id}`), 'detail').body;
  const settled = async (id: string, status: string) => waitFor(() => detailOf(id), (detail) => detail.status === status, `delivery ${id} ${status}`);

  it('shows a delivered report with the exact body and headers the receiver got, and its attempt', async () => {
    refusing = false;
    const messageId = await stack.send();
    const listed = await deliveryOf(messageId);
    const detail = await settled(listed.id, 'delivered');
    const [hook] = hooksFor(stack.receiver, messageId);
    expect(hook).toBeDefined();
    expect(detail.body).toBe(hook!.raw.toString('utf8'));
    expect(detail.headers).toEqual({
      'content-type': 'application/json',
      'x-gateway-signature': hook!.headers['x-gateway-signature'],
      'x-gateway-delivery-id': listed.id,
      'user-agent': hook!.headers['user-agent'],
    });
    expect(detail).toMatchObject({ id: listed.id, message_id: messageId, api_key_id: stack.key.id, url: stack.receiver.url(), status: 'delivered', attempts: 1, last_status_code: 200 });
    expect(detail).not.toHaveProperty('workspace_id');
    expect(detail.attempt_log).toEqual([
      { attempt: 1, started_at: expect.stringMatching(ISO_UTC_MS), url: stack.receiver.url(), status_code: 200, latency_ms: expect.any(Number), error: null, outcome: 'delivered' },
    ]);
    const delivered = (await developer.request('GET', '/console/api/webhook-deliveries?status=delivered')).body;
    expect(delivered.deliveries.map((delivery: any) => delivery.id)).toContain(listed.id);
    expect((await developer.request('GET', '/console/api/webhook-deliveries?status=failed')).body.deliveries.map((delivery: any) => delivery.id)).not.toContain(listed.id);
  });

  it('pages with has_more and filters by creation time', async () => {
    refusing = false;
    const first = await deliveryOf(await stack.send());
    const second = await deliveryOf(await stack.send());
    const page = (await developer.request('GET', '/console/api/webhook-deliveries?limit=1')).body;
    expect(page).toMatchObject({ count: 1, has_more: true });
    expect(page.deliveries[0].id).toBe(second.id);
    const later = (await developer.request('GET', `/console/api/webhook-deliveries?from=${encodeURIComponent(second.created_at)}`)).body.deliveries.map((delivery: any) => delivery.id);
    expect(later).toContain(second.id);
    expect(later).not.toContain(first.id);
    expectError(await developer.request('GET', '/console/api/webhook-deliveries?from=yesterday'), 'invalid_date_range', /^from must be an ISO 8601 date-time/);
    expectError(await developer.request('GET', '/console/api/webhook-deliveries?status=lost'), 'invalid_request');
  });

  it('redelivers a failed report to the receiver once it is back, and logs who did it', async () => {
    refusing = true;
    const messageId = await stack.send();
    const { id } = await deliveryOf(messageId);
    const failed = await settled(id, 'failed');
    expect(failed.attempt_log.map((attempt: any) => attempt.outcome)).toEqual(['retry', 'retry', 'retry', 'retry', 'retry', 'failed']);
    expect(failed.last_error).toBe('HTTP 500: maintenance');
    refusing = false;
    const redelivered = await developer.request('POST', `/console/api/webhook-deliveries/${id}/redeliver`);
    expectStatus(redelivered, 200);
    expect(redelivered.body).toMatchObject({ id, status: 'pending', body: failed.body, headers: failed.headers });
    const delivered = await settled(id, 'delivered');
    expect(delivered.attempts).toBe(7);
    expect(hooksFor(stack.receiver, messageId).at(-1)!.raw.toString('utf8')).toBe(failed.body);
    const entry = (await owner.request('GET', '/console/api/activity')).body.entries.find((item: any) => item.target === id);
    expect(entry).toMatchObject({ action: 'webhook_delivery.redeliver', actor: { id: developer.userId }, before: { status: 'failed' }, after: { status: 'pending' } });
    // A pending report (its retries take about 1.5 s here) cannot be redelivered on top of itself.
    refusing = true;
    const pending = await deliveryOf(await stack.send());
    expectError(await developer.request('POST', `/console/api/webhook-deliveries/${pending.id}/redeliver`), 'webhook_delivery_pending');
    await settled(pending.id, 'failed');
  });

  it('redelivers every failure since a time, of this workspace only', async () => {
    refusing = true;
    const since = new Date().toISOString();
    const ids = [];
    for (let index = 0; index < 2; index += 1) ids.push((await deliveryOf(await stack.send())).id);
    for (const id of ids) await settled(id, 'failed');
    // Another workspace's failure at the same time stays failed.
    const other = await seedWorkspace(stack.gateway);
    expectOk(await stack.gateway.admin('PATCH', `/api-keys/${other.apiKeyId}`, { webhook_url: stack.receiver.url('/other') }), 'other webhook');
    const otherId = await insertDelivery(stack.gateway, { workspaceId: other.workspaceId, apiKeyId: other.apiKeyId, url: stack.receiver.url('/other'), status: 'failed' });
    refusing = false;
    const response = await developer.request('POST', '/console/api/webhook-deliveries/redeliver-failed', { body: { failed_since: since } });
    expectStatus(response, 200);
    expect(response.body).toEqual({ redelivered: 2, skipped: 0, failed_since: since });
    for (const id of ids) await settled(id, 'delivered');
    expect((await stack.gateway.admin('GET', `/webhook-deliveries/${otherId}`)).body.status).toBe('failed');
    // Another workspace's report is not found, to read or to redeliver.
    expectError(await developer.request('GET', `/console/api/webhook-deliveries/${otherId}`), 'webhook_delivery_not_found');
    expectError(await developer.request('POST', `/console/api/webhook-deliveries/${otherId}/redeliver`), 'webhook_delivery_not_found');
    expect((await developer.request('GET', '/console/api/webhook-deliveries?limit=200')).text).not.toContain(otherId);
    expect((await stack.gateway.admin('GET', `/webhook-deliveries/${otherId}`)).body.status).toBe('failed');
    const entry = (await owner.request('GET', '/console/api/activity')).body.entries.find((item: any) => item.action === 'webhook_delivery.redeliver_failed');
    expect(entry).toMatchObject({ target: null, after: { failed_since: since, redelivered: 2, skipped: 0 } });
  });

  it("cancels a key's pending reports when its webhook URL is removed in the console", async () => {
    const hanging = await startReceiver(() => ({ hang: true }));
    const created = expectOk(
      await developer.request('POST', '/console/api/api-keys', { body: { name: 'slow', scopes: ['messages:send', 'messages:read'], webhook_url: hanging.url() } }),
      'create key',
    ).body;
    const messageId = await stack.send({}, { id: created.id, key: created.key });
    const { id } = await deliveryOf(messageId);
    await waitFor(() => hanging.hooks.length, (count) => count > 0, 'the first attempt');
    expectStatus(await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: null } }), 200);
    const cancelled = await detailOf(id);
    expect(cancelled).toMatchObject({ status: 'cancelled', last_error: 'cancelled: the API key has no webhook URL any more' });
    await hanging.close();
  });
});
