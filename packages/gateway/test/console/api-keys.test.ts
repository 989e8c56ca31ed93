/**
 * API keys in the console: what a developer of a workspace sees and does with its keys, that the
 * keys made there work on /api/v1 like the operator's, and that every change is in the activity log
 * without the key itself.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';
import { startReceiver, waitFor, type Receiver } from '../webhooks/support.ts';

describe.each(STORE_KINDS)('console API keys (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let developer: ConsoleSession;
  let owner: ConsoleSession;
  let receiver: Receiver;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
    developer = await consoleUserIn(gateway, workspace.workspaceId, 'developer');
    owner = await consoleUserIn(gateway, workspace.workspaceId, 'owner');
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  const createKey = async (body: Record<string, unknown> = {}) => {
    const response = await developer.request('POST', '/console/api/api-keys', { body: { name: 'Website', scopes: ['messages:send', 'messages:read'], ...body } });
    expectStatus(response, 201);
    return response.body;
  };
  const activity = async () => (await owner.request('GET', '/console/api/activity')).body.entries as any[];

  it('creates a key shown once, which then works on /api/v1 and is listed without its secret', async () => {
    const created = await createKey({ name: 'Cửa hàng', webhook_url: receiver.url() });
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'Cửa hàng',
      key_prefix: created.key.slice(0, 15),
      scopes: ['messages:send', 'messages:read'],
      webhook_url: receiver.url(),
      created_at: expect.stringMatching(ISO_UTC_MS),
      revoked_at: null,
      last_used_at: null,
      key: expect.stringMatching(/^tms_live_/),
    });
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 200);
    const list = await developer.request('GET', '/console/api/api-keys');
    expectStatus(list, 200);
    const listed = list.body.api_keys.find((key: any) => key.id === created.id);
    expect(listed).toMatchObject({ id: created.id, name: 'Cửa hàng', webhook_url: receiver.url() });
    expect(listed).not.toHaveProperty('key');
    expect(list.text).not.toContain(created.key);
  });

  it('shows when a key was last used', async () => {
    const created = await createKey();
    const before = Date.now();
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 200);
    const listed = await waitFor(
      async () => (await developer.request('GET', '/console/api/api-keys')).body.api_keys.find((key: any) => key.id === created.id),
      (key) => key.last_used_at !== null,
      'last_used_at',
    );
    expect(Date.parse(listed.last_used_at)).toBeGreaterThanOrEqual(before - 1000);
    // The operator's own keys are listed too, with theirs.
    expect((await developer.request('GET', '/console/api/api-keys')).body.api_keys.map((key: any) => key.id)).toContain(workspace.apiKeyId);
  });

  it('renames a key, sets and removes its webhook URL, and refuses an unsafe URL', async () => {
    const created = await createKey();
    const renamed = await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { name: 'POS' } });
    expectStatus(renamed, 200);
    expect(renamed.body).toMatchObject({ name: 'POS', webhook_url: null });
    const addressed = await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: 'https://hooks.example.vn/tms' } });
    expect(addressed.body).toMatchObject({ name: 'POS', webhook_url: 'https://hooks.example.vn/tms' });
    const removed = await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: null } });
    expect(removed.body.webhook_url).toBeNull();
    // (This gateway allows private targets, for the local receivers of these tests.)
    for (const url of ['ftp://hooks.example.vn/', 'https://user:secret@hooks.example.vn/', 'not a url']) {
      expectError(await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: url } }), 'invalid_webhook_url');
    }
    expectError(await developer.request('POST', '/console/api/api-keys', { body: { name: 'x', scopes: ['messages:send'], webhook_url: 'file:///etc/passwd' } }), 'invalid_webhook_url');
    expectError(await developer.request('POST', '/console/api/api-keys', { body: { name: 'x', scopes: [] } }), 'invalid_request');
    expectError(await developer.request('POST', '/console/api/api-keys', { body: { name: '', scopes: ['messages:send'] } }), 'invalid_request');
    const entries = (await activity()).filter((entry) => entry.target === created.id);
    expect(entries.map((entry) => entry.action)).toEqual(['api_key.webhook_change', 'api_key.webhook_change', 'api_key.rename', 'api_key.create']);
    expect(entries[0]).toMatchObject({ before: { webhook_url: 'https://hooks.example.vn/tms' }, after: { webhook_url: null }, actor: { kind: 'console_user', id: developer.userId, email: developer.email } });
    expect(entries[2]).toMatchObject({ before: { name: 'Website' }, after: { name: 'POS' } });
  });

  it('revokes a key: /api/v1 refuses it at once and the activity log says who did it', async () => {
    const created = await createKey();
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 200);
    const revoked = await developer.request('POST', `/console/api/api-keys/${created.id}/revoke`);
    expectStatus(revoked, 200);
    expect(revoked.body.revoked_at).toMatch(ISO_UTC_MS);
    expectError(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 'unauthenticated');
    // Revoking again changes nothing and logs nothing more.
    expect((await developer.request('POST', `/console/api/api-keys/${created.id}/revoke`)).body.revoked_at).toBe(revoked.body.revoked_at);
    const entries = (await activity()).filter((entry) => entry.target === created.id);
    expect(entries.map((entry) => entry.action)).toEqual(['api_key.revoke', 'api_key.create']);
    expect(entries[0]).toMatchObject({ before: { revoked_at: null }, after: { revoked_at: revoked.body.revoked_at } });
  });

  it('never writes a key into the activity log', async () => {
    const created = await createKey({ webhook_url: receiver.url() });
    const log = await owner.request('GET', '/console/api/activity?limit=200');
    expect(log.text).toContain(created.id);
    expect(log.text).not.toContain(created.key);
    expect(log.body.entries.find((entry: any) => entry.target === created.id && entry.action === 'api_key.create').after).toEqual({
      name: 'Website',
      key_prefix: created.key_prefix,
      scopes: ['messages:send', 'messages:read'],
      webhook_url: receiver.url(),
      rate_limit_per_second: null,
    });
  });

  it("posts a signed sample report to the key's URL and shows the receiver's answer", async () => {
    const created = await createKey({ webhook_url: receiver.url('/test-report') });
    receiver.respond(() => ({ status: 202, body: 'cảm ơn' }));
    const response = await developer.request('POST', `/console/api/api-keys/${created.id}/test-report`);
    expectStatus(response, 200);
    expect(response.body).toMatchObject({ url: receiver.url('/test-report'), status_code: 202, response_body: 'cảm ơn', error: null });
    expect(Number.isInteger(response.body.latency_ms)).toBe(true);
    const hook = receiver.hooks.at(-1)!;
    expect(hook.path).toBe('/test-report');
    expect(hook.raw.toString('utf8')).toBe(response.body.request_body);
    // Signed exactly like a real report: HMAC-SHA256 of the raw bytes with the key.
    expect(hook.headers['x-gateway-signature']).toBe(createHmac('sha256', created.key).update(hook.raw).digest('hex'));
    expect(hook.headers['content-type']).toBe('application/json');
    const report = JSON.parse(response.body.request_body);
    expect(Object.keys(report)).toEqual(['message_id', 'client_req_id', 'from', 'to', 'status', 'delivered_at', 'tracking_id']);
    expect(report).toMatchObject({ message_id: expect.stringMatching(/^msg_test_/), from: workspace.oaId, status: 'SUCCESS', delivered_at: expect.stringMatching(ISO_UTC_MS) });
    // Nothing was stored: no delivery, no message.
    expect((await developer.request('GET', '/console/api/webhook-deliveries')).body.deliveries).toEqual([]);
    expectError(await gateway.request('GET', `/api/v1/messages/${report.message_id}`, { key: workspace.apiKey }), 'message_not_found');
  });

  it("shows a refusing receiver's status, its body cut at 2 KB, and a receiver that is down", async () => {
    const created = await createKey({ webhook_url: receiver.url() });
    receiver.respond(() => ({ status: 500, body: 'x'.repeat(5000) }));
    const refused = (await developer.request('POST', `/console/api/api-keys/${created.id}/test-report`)).body;
    expect(refused).toMatchObject({ status_code: 500, error: expect.stringMatching(/^HTTP 500/) });
    expect(refused.response_body).toBe('x'.repeat(2048));
    receiver.respond(() => ({ status: 200 }));
    const down = await startReceiver();
    const url = down.url();
    await down.close();
    expectStatus(await developer.request('PATCH', `/console/api/api-keys/${created.id}`, { body: { webhook_url: url } }), 200);
    const unreachable = (await developer.request('POST', `/console/api/api-keys/${created.id}/test-report`)).body;
    expect(unreachable).toMatchObject({ url, status_code: null, response_body: '', error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('refuses a test report for a key without a webhook URL', async () => {
    const created = await createKey();
    expectError(await developer.request('POST', `/console/api/api-keys/${created.id}/test-report`), 'invalid_request', /no webhook URL/);
  });

  it("does not touch another workspace's keys: 404 as if they did not exist", async () => {
    const other = await seedWorkspace(gateway);
    expectError(await developer.request('PATCH', `/console/api/api-keys/${other.apiKeyId}`, { body: { name: 'mine now' } }), 'api_key_not_found');
    expectError(await developer.request('POST', `/console/api/api-keys/${other.apiKeyId}/revoke`), 'api_key_not_found');
    expectError(await developer.request('POST', `/console/api/api-keys/${other.apiKeyId}/test-report`), 'api_key_not_found');
    expect((await developer.request('GET', '/console/api/api-keys')).body.api_keys.map((key: any) => key.id)).not.toContain(other.apiKeyId);
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: other.apiKey }), 200);
  });
});

describe.each(STORE_KINDS)('last use of a key (%s)', (kind) => {
  let now = Date.parse('2026-11-24T03:00:00.000Z');
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let developer: ConsoleSession;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { clock: () => now });
    workspace = await seedWorkspace(gateway);
    developer = await consoleUserIn(gateway, workspace.workspaceId, 'developer');
  });
  afterAll(async () => gateway?.close());

  const lastUsed = async (id: string): Promise<string | null> =>
    (await developer.request('GET', '/console/api/api-keys')).body.api_keys.find((key: any) => key.id === id).last_used_at;

  it('is recorded to the minute: later uses within a minute do not move it, the first after it does', async () => {
    const created = (await developer.request('POST', '/console/api/api-keys', { body: { name: 'POS', scopes: ['messages:read'] } })).body;
    const firstUse = now;
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 200);
    await waitFor(() => lastUsed(created.id), (time) => time === new Date(firstUse).toISOString(), 'the first use');
    now += 30_000;
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 200);
    // Unmoved: this use was not written.
    for (let look = 0; look < 5; look += 1) expect(await lastUsed(created.id)).toBe(new Date(firstUse).toISOString());
    now += 31_000;
    expectStatus(await gateway.request('GET', '/api/v1/messages', { key: created.key }), 200);
    await waitFor(() => lastUsed(created.id), (time) => time === new Date(now).toISOString(), 'the use a minute later');
  });
});
