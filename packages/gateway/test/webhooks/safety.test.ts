/**
 * What protects the gateway and its receivers: webhook URLs are http(s) only and, unless
 * TMS_WEBHOOK_ALLOW_PRIVATE, never reach private, loopback or link-local addresses, also through a
 * name that resolves there (checked again at connect time); a large answer is not read whole; a
 * slow receiver gets at most its own share of requests and does not hold back the others.
 * SQLite and PostgreSQL.
 */
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNonPublicAddress } from '../../src/lib/webhook-url.ts';
import { STORE_KINDS } from '../harness.ts';
import { expectError } from '../api/helpers.ts';
import { TEST_RETRY_DELAYS_MS, createHookKey, hooksFor, startReceiver, startWebhookStack, waitFor, type Receiver, type WebhookStack } from './support.ts';

/** This machine's name, if it resolves only to non-public addresses (it usually does: /etc/hosts). */
async function loopbackName(): Promise<string | null> {
  const name = hostname();
  if (!name || name === 'localhost') return null;
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.length > 0 && addresses.every((entry) => isNonPublicAddress(entry.address)) ? name : null;
  } catch {
    return null;
  }
}

const privateName = await loopbackName();

describe.each(STORE_KINDS)('webhook URL safety, private targets refused (%s)', (kind) => {
  let stack: WebhookStack;

  beforeAll(async () => {
    stack = await startWebhookStack(kind, {
      env: { TMS_WEBHOOK_ALLOW_PRIVATE: 'false' },
      // Only a name passes the URL check; it must be caught when the sender connects.
      keyUrl: (receiver) => `http://${privateName ?? 'hooks.invalid'}:${receiver.port}/hook`,
    });
  });
  afterAll(async () => stack?.close());

  it('refuses non-http(s) URLs, credentials and private, loopback or link-local literals when a key is configured', async () => {
    for (const url of ['ftp://hooks.example.com/x', 'http://user:secret@hooks.example.com/x', 'http://127.0.0.1:8080/x', 'http://[::1]/x', 'http://10.0.0.8/x', 'http://169.254.169.254/latest', 'http://localhost/x', 'http://[::ffff:127.0.0.1]/x']) {
      expectError(await stack.gateway.admin('PATCH', `/api-keys/${stack.key.id}`, { webhook_url: url }), 'invalid_request');
      expectError(await stack.gateway.admin('POST', `/workspaces/${stack.workspaceId}/api-keys`, { scopes: ['messages:send'], webhook_url: url }), 'invalid_request');
    }
  });

  it.skipIf(privateName === null)('checks the addresses a name resolves to at connect time and never reaches a loopback receiver', async () => {
    const msgId = await stack.send();
    const row = await waitFor(
      async () => {
        const list = await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}`);
        const found = list.body.deliveries.find((delivery: { message_id: string }) => delivery.message_id === msgId);
        return found ? (await stack.gateway.admin('GET', `/webhook-deliveries/${found.id}`)).body : undefined;
      },
      (found) => found?.status === 'failed',
      'the delivery to fail',
      60_000,
    );
    expect(stack.receiver.hooks).toHaveLength(0);
    expect(row.attempt_log).toHaveLength(1 + TEST_RETRY_DELAYS_MS.length);
    for (const attempt of row.attempt_log) {
      expect(attempt).toMatchObject({ status_code: null, error: expect.stringMatching(new RegExp(`^refused: ${privateName} resolves to the non-public address`)) });
    }
  });
});

describe.each(STORE_KINDS)('webhook sender safeguards (%s)', (kind) => {
  let stack: WebhookStack;
  let slow: Receiver;

  beforeAll(async () => {
    stack = await startWebhookStack(kind, { env: { TMS_WEBHOOK_RECEIVER_CONCURRENCY: '2', TMS_WEBHOOK_CONCURRENCY: '50' } });
    slow = await startReceiver(() => ({ status: 200, delayMs: 600 }));
  });
  afterAll(async () => {
    await stack?.close();
    await slow?.close();
  });

  it('gives a slow receiver at most its share of requests at once, and keeps serving the others meanwhile', async () => {
    const slowKey = await createHookKey(stack.gateway, stack.workspaceId, slow.url());
    const slowIds = await Promise.all(Array.from({ length: 16 }, () => stack.send({}, slowKey)));
    await waitFor(() => slow.hooks.length, (count) => count >= 2, 'the slow receiver to be busy');
    const fastIds = await Promise.all(Array.from({ length: 6 }, () => stack.send()));
    await waitFor(() => fastIds.map((id) => hooksFor(stack.receiver, id).length), (counts) => counts.every((count) => count >= 1), 'the fast receiver\'s reports');
    // 16 reports at 2 at a time and 600 ms each take about 5 s: the fast ones did not wait for them.
    const slowDoneSoFar = new Set(slow.hooks.map((hook) => hook.raw.toString('utf8'))).size;
    expect(slowDoneSoFar).toBeLessThan(slowIds.length);
    await waitFor(() => slowIds.map((id) => hooksFor(slow, id).length), (counts) => counts.every((count) => count >= 1), 'every slow report', 60_000);
    expect(slow.concurrency.max).toBeLessThanOrEqual(2);
  });

  it('does not read a large answer whole: a 2xx with 8 MB is delivered, a refusal keeps a short excerpt', async () => {
    const big = 'x'.repeat(8 * 1024 * 1024);
    const bigOk = await startReceiver(() => ({ status: 200, body: big }));
    const bigNo = await startReceiver(() => ({ status: 500, body: big }));
    try {
      const okKey = await createHookKey(stack.gateway, stack.workspaceId, bigOk.url());
      const noKey = await createHookKey(stack.gateway, stack.workspaceId, bigNo.url());
      const okId = await stack.send({}, okKey);
      const noId = await stack.send({}, noKey);
      const read = async (id: string) => {
        const list = await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}&limit=500`);
        const found = list.body.deliveries.find((delivery: { message_id: string }) => delivery.message_id === id);
        return found ? (await stack.gateway.admin('GET', `/webhook-deliveries/${found.id}`)).body : undefined;
      };
      await waitFor(() => read(okId), (row) => row?.status === 'delivered', 'the 2xx with a large body');
      const refused = await waitFor(() => read(noId), (row) => row?.attempt_log?.length >= 1, 'a refused attempt');
      expect(refused.attempt_log[0].error).toMatch(/^HTTP 500: x+$/);
      expect(refused.attempt_log[0].error.length).toBeLessThanOrEqual('HTTP 500: '.length + 200);
      expect((await stack.gateway.admin('PATCH', `/api-keys/${noKey.id}`, { webhook_url: null })).status).toBe(200);
    } finally {
      await bigOk.close();
      await bigNo.close();
    }
  });
});
