/**
 * The console's messages pages through the whole chain (gateway with workers, ZNS simulator, a real
 * webhook receiver): the list is /api/v1's, a message shows its timeline and the delivery report
 * exactly as the receiver got it, and a queued message can be cancelled.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus, walletOf } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';
import { OTP_TEMPLATE, hooksFor, nextPhone, startWebhookStack, waitFor, type WebhookStack } from '../webhooks/support.ts';

/** Numbers ending in 777 are refused by the simulated platform. */
const REFUSED_PHONE = '0912000777';

describe.each(STORE_KINDS)('console messages (%s)', (kind) => {
  let stack: WebhookStack;
  let developer: ConsoleSession;
  let viewer: ConsoleSession;

  beforeAll(async () => {
    stack = await startWebhookStack(kind);
    stack.simulator.control.setRecipientRules([{ suffix: '777', result: 'error', error: -118 }]);
    developer = await consoleUserIn(stack.gateway, stack.workspaceId, 'developer');
    viewer = await consoleUserIn(stack.gateway, stack.workspaceId, 'viewer');
  });
  afterAll(async () => stack?.close());

  const consoleSend = async (body: Record<string, unknown>): Promise<string> => {
    const response = await developer.request('POST', '/console/api/messages/send', {
      body: { template_id: OTP_TEMPLATE, phone: nextPhone(), template_data: { otp: '123456' }, ...body },
    });
    expectStatus(response, 202);
    return response.body.msg_id as string;
  };
  const history = async (id: string, session: ConsoleSession = viewer) => {
    const response = await session.request('GET', `/console/api/messages/${id}`);
    expectStatus(response, 200);
    return response.body;
  };

  describe('GET /console/api/messages/{id}', () => {
    it('shows the timeline and the delivery report with the exact body, signature and attempts the receiver got', async () => {
      const id = await consoleSend({ api_key_id: stack.key.id, tracking_id: 'console-report' });
      const [hook] = await waitFor(() => hooksFor(stack.receiver, id), (hooks) => hooks.length >= 1, 'the report');
      const detail = await waitFor(() => history(id), (body) => body.reports[0]?.status === 'delivered', 'the report recorded as delivered');

      expect(detail.message).toMatchObject({ msg_id: id, tracking_id: 'console-report', status: 'delivered', source: 'console' });
      expect(detail.timeline.map((event: { event: string }) => event.event)).toEqual(['created', 'sent', 'delivered']);
      expect(detail.timeline[0].at).toBe(detail.message.created_at);
      expect(detail.timeline[2]).toEqual({ event: 'delivered', at: detail.message.delivered_at });
      expect(detail.reports).toHaveLength(1);
      const [report] = detail.reports;
      expect(report).toMatchObject({ message_id: id, api_key_id: stack.key.id, url: stack.receiver.url(), status: 'delivered', attempts: 1, last_status_code: 200 });
      expect(report.body).toBe(hook!.raw.toString('utf8'));
      expect(report.headers['content-type']).toBe('application/json');
      expect(report.headers['x-gateway-signature']).toBe(hook!.headers['x-gateway-signature']);
      expect(report.attempt_log).toEqual([
        { attempt: 1, started_at: expect.stringMatching(ISO_UTC_MS), url: stack.receiver.url(), status_code: 200, latency_ms: expect.any(Number), error: null, outcome: 'delivered' },
      ]);
    });

    it('has no report for a message sent without an API key', async () => {
      const id = await consoleSend({});
      const detail = await waitFor(() => history(id), (body) => body.message.status === 'delivered', 'delivered');
      expect(detail.reports).toEqual([]);
      expect(hooksFor(stack.receiver, id)).toEqual([]);
    });

    it("shows a platform failure with its code, English message and Vietnamese reason", async () => {
      const id = await consoleSend({ phone: REFUSED_PHONE });
      const detail = await waitFor(() => history(id), (body) => body.message.status === 'failed', 'failed');
      const failed = detail.timeline.at(-1);
      expect(failed).toEqual({
        event: 'failed',
        at: detail.message.failed_at,
        error_code: -118,
        error_message: expect.stringMatching(/\S/),
        error_reason: expect.stringMatching(/\S/),
      });
      expect(failed.error_message).toBe(detail.message.error_message);
      expect(failed.error_reason).toBe(detail.message.error_reason);
    });

    it('shows a scheduled message as created and scheduled', async () => {
      const at = new Date(Date.now() + 2 * 60 * 60 * 1000);
      at.setUTCMilliseconds(0);
      const id = await consoleSend({ send_at: at.toISOString() });
      const detail = await history(id);
      expect(detail.timeline).toEqual([
        { event: 'created', at: detail.message.created_at },
        { event: 'scheduled', at: at.toISOString() },
      ]);
    });

    it("answers 404 for another workspace's message", async () => {
      const id = await stack.send();
      const other = await seedWorkspace(stack.gateway);
      const stranger = await consoleUserIn(stack.gateway, other.workspaceId, 'owner');
      expectError(await stranger.request('GET', `/console/api/messages/${id}`), 'message_not_found');
      expectError(await viewer.request('GET', '/console/api/messages/msg_nope'), 'message_not_found');
    });
  });

  describe('GET /console/api/messages', () => {
    it('answers exactly what GET /api/v1/messages answers, for each filter', async () => {
      await consoleSend({ tracking_id: 'list-a' });
      const refused = await consoleSend({ phone: REFUSED_PHONE, tracking_id: 'list-b' });
      await waitFor(() => history(refused), (body) => body.message.status === 'failed', 'failed');
      const queries = ['', 'limit=2', 'limit=2&offset=1', 'status=failed', 'tracking_id=list-a', `phone=${REFUSED_PHONE}`, `template_id=${OTP_TEMPLATE}`, 'from=2020-01-01T00:00:00&to=2099-01-01T00:00:00'];
      for (const query of queries) {
        // The workers may move a message on between the two reads: read both again until one moment's pair agrees.
        const [fromConsole, fromApi] = await waitFor(
          () => Promise.all([viewer.request('GET', `/console/api/messages?${query}`), stack.gateway.request('GET', `/api/v1/messages?${query}`, { key: stack.key.key })]),
          ([consolePage, apiPage]) => consolePage.status !== 200 || isDeepStrictEqual(consolePage.body, apiPage.body),
          `the same page for ${query}`,
          5_000,
        );
        expectStatus(fromConsole, 200);
        expect(fromConsole.body, query).toEqual(fromApi.body);
      }
      const failed = await viewer.request('GET', '/console/api/messages?status=failed');
      expect(failed.body.messages.length).toBeGreaterThanOrEqual(1);
      expect(failed.body.messages.every((message: { status: string }) => message.status === 'failed')).toBe(true);
    });

    it('refuses bad filters as /api/v1 does', async () => {
      expectError(await viewer.request('GET', '/console/api/messages?from=yesterday'), 'invalid_date_range');
      expectError(await viewer.request('GET', '/console/api/messages?limit=201'), 'invalid_request');
      expectError(await viewer.request('GET', '/console/api/messages?status=lost'), 'invalid_request');
    });
  });

  describe('POST /console/api/messages/{id}/cancel', () => {
    const scheduled = () => consoleSend({ send_at: new Date(Date.now() + 3 * 60 * 60 * 1000).toISOString() });

    it('deletes a queued message and refunds it', async () => {
      const id = await scheduled();
      const before = (await walletOf(stack.gateway, stack.workspaceId)).balance;
      const response = await developer.request('POST', `/console/api/messages/${id}/cancel`);
      expectStatus(response, 200);
      expect(response.body).toEqual({ cancelled: true, msg_id: id });
      expect((await walletOf(stack.gateway, stack.workspaceId)).balance).toBeGreaterThan(before);
      expectError(await viewer.request('GET', `/console/api/messages/${id}`), 'message_not_found');
      expectError(await developer.request('POST', `/console/api/messages/${id}/cancel`), 'message_not_found');
    });

    it('replays under its Idempotency-Key', async () => {
      const id = await scheduled();
      const headers = { 'idempotency-key': `cancel-${id}` };
      const first = await developer.request('POST', `/console/api/messages/${id}/cancel`, { headers });
      const again = await developer.request('POST', `/console/api/messages/${id}/cancel`, { headers });
      expectStatus(again, 200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it('refuses a message that is no longer queued (409) and leaves it alone', async () => {
      const id = await consoleSend({});
      await waitFor(() => history(id), (body) => body.message.status === 'delivered', 'delivered');
      expectError(await developer.request('POST', `/console/api/messages/${id}/cancel`), 'message_not_queued');
      expect((await history(id)).message.status).toBe('delivered');
    });

    it('is refused to a viewer, and the message stays queued', async () => {
      const id = await scheduled();
      expectError(await viewer.request('POST', `/console/api/messages/${id}/cancel`), 'forbidden_role');
      expect((await history(id)).message.status).toBe('queued');
    });
  });
});
