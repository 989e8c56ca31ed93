/**
 * Sending from the console: POST /console/api/messages/send and /batch go through the public API's
 * acceptance path (validation, charge, quota, idempotency) as the signed-in user, with source console.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { createKey, expectError, expectStatus, listAll, unique, walletOf } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';

describe.each(STORE_KINDS)('console sending (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let developer: ConsoleSession;
  let owner: ConsoleSession;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { price: 300, balance: 1_000_000 });
    developer = await consoleUserIn(gateway, ws.workspaceId, 'developer');
    owner = await consoleUserIn(gateway, ws.workspaceId, 'owner');
  });
  afterAll(async () => gateway?.close());

  const send = (session: ConsoleSession, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    session.request('POST', '/console/api/messages/send', { body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, ...body }, headers });
  const batch = (session: ConsoleSession, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    session.request('POST', '/console/api/messages/batch', { body: { template_id: ws.templateId, ...body }, headers });
  const activity = async () => {
    const response = await owner.request('GET', '/console/api/activity?limit=200');
    expectStatus(response, 200);
    return response.body.entries as { action: string; target: string | null; actor: { id: string | null }; after: Record<string, unknown> | null }[];
  };

  describe('POST /console/api/messages/send', () => {
    it('queues and charges one message that the public API lists with source console', async () => {
      const before = (await walletOf(gateway, ws.workspaceId)).balance;
      const response = await send(developer, { tracking_id: 'console-1' });
      expectStatus(response, 202);
      expect(response.body).toEqual({ msg_id: expect.stringMatching(/^msg_/), tracking_id: 'console-1', status: 'queued', scheduled_at: null });
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(before - 300);
      const [listed] = await listAll(gateway, ws, 'tracking_id=console-1');
      expect(listed).toMatchObject({ msg_id: response.body.msg_id, source: 'console', phone: '84912345678', status: 'queued', template_id: ws.templateId });
    });

    it('replays the first answer under the same Idempotency-Key, charging once and logging once', async () => {
      const key = unique('console-idem-');
      const before = (await walletOf(gateway, ws.workspaceId)).balance;
      const first = await send(developer, { tracking_id: 'idem-1' }, { 'idempotency-key': key });
      const again = await send(developer, { tracking_id: 'idem-1' }, { 'idempotency-key': key });
      expectStatus(first, 202);
      expectStatus(again, 202);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(before - 300);
      expect((await listAll(gateway, ws, 'tracking_id=idem-1')).length).toBe(1);
      const logged = (await activity()).filter((entry) => entry.target === first.body.msg_id);
      expect(logged).toHaveLength(1);
      expectError(await send(developer, { tracking_id: 'idem-2' }, { 'idempotency-key': key }), 'idempotency_key_reused');
    });

    it('schedules with send_at', async () => {
      const at = new Date(Date.now() + 3 * 60 * 60 * 1000);
      at.setUTCMilliseconds(0);
      const response = await send(developer, { send_at: at.toISOString() });
      expectStatus(response, 202);
      expect(response.body.scheduled_at).toBe(at.toISOString());
    });

    it('writes the send to the activity log without the phone number or template data', async () => {
      const response = await send(developer, { tracking_id: 'audited' });
      const entry = (await activity()).find((row) => row.target === response.body.msg_id);
      expect(entry).toMatchObject({ action: 'message.send', actor: { id: developer.userId }, after: { template_id: ws.templateId, messages: 1 } });
      expect(JSON.stringify(entry)).not.toMatch(/912345678|Nguyễn|A123/);
    });

    it('refuses what /api/v1 refuses, with the same error types', async () => {
      expectError(await send(developer, { template_data: { name: 'An' } }), 'invalid_template_data', /code/);
      expectError(await send(developer, { phone: ' - ' }), 'missing_phone');
      expectError(await send(developer, { template_id: 'tpl_nope' }), 'template_not_found');
      expectError(await send(developer, { tracking_id: 'has space' }), 'invalid_tracking_id');
      expectError(await send(developer, { send_at: 'tomorrow' }), 'invalid_send_at');
      expectError(await send(developer, { surprise: true }), 'invalid_request');
    });

    it('refuses a send the wallet cannot pay, charging nothing', async () => {
      const poor = await seedWorkspace(gateway, { balance: 100, price: 300 });
      const poorDeveloper = await consoleUserIn(gateway, poor.workspaceId, 'developer');
      const response = await poorDeveloper.request('POST', '/console/api/messages/send', { body: { template_id: poor.templateId, phone: '0912345678', template_data: VALID_DATA } });
      expectError(response, 'insufficient_balance');
      expect((await walletOf(gateway, poor.workspaceId)).balance).toBe(100);
    });

    it('takes an active API key of the workspace for the delivery report, and refuses any other', async () => {
      const key = await createKey(gateway, ws.workspaceId, ['messages:send'], { webhook_url: 'https://hooks.example.com/tms' });
      expectStatus(await send(developer, { api_key_id: key.id }), 202);
      expectError(await send(developer, { api_key_id: 'key_unknown' }), 'api_key_not_found');
      const other = await seedWorkspace(gateway);
      expectError(await send(developer, { api_key_id: other.apiKeyId }), 'api_key_not_found');
      const revoked = await createKey(gateway, ws.workspaceId, ['messages:send']);
      expectStatus(await gateway.admin('POST', `/api-keys/${revoked.id}/revoke`), 200);
      expectError(await send(developer, { api_key_id: revoked.id }), 'api_key_not_found');
    });

    it('is refused to a viewer (403) and without the CSRF token (403), and sends nothing', async () => {
      const viewer = await consoleUserIn(gateway, ws.workspaceId, 'viewer');
      expectError(await send(viewer, { tracking_id: 'by-viewer' }), 'forbidden_role');
      const noCsrf = await developer.request('POST', '/console/api/messages/send', {
        csrf: false,
        body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, tracking_id: 'no-csrf' },
      });
      expectError(noCsrf, 'csrf_failed');
      expect(await listAll(gateway, ws, 'tracking_id=by-viewer')).toEqual([]);
      expect(await listAll(gateway, ws, 'tracking_id=no-csrf')).toEqual([]);
    });
  });

  describe('POST /console/api/messages/batch', () => {
    it('queues every recipient with source console and reports the bad ones per recipient', async () => {
      const response = await batch(developer, {
        recipients: [
          { phone: '0912000001', template_data: VALID_DATA, tracking_id: 'b-1' },
          { phone: '0912000002', template_data: { name: 'An' }, tracking_id: 'b-2' },
          { phone: '0912000003', template_data: VALID_DATA, tracking_id: 'b-3' },
        ],
      });
      expectStatus(response, 202);
      expect(response.body).toMatchObject({ accepted: 2, total: 3, scheduled_at: null });
      expect(response.body.results.map((result: { status: string }) => result.status)).toEqual(['queued', 'error', 'queued']);
      expect(response.body.results[1].error).toMatch(/^invalid_template_data: /);
      const listed = await listAll(gateway, ws, 'tracking_id=b-3');
      expect(listed).toEqual([expect.objectContaining({ source: 'console', msg_id: response.body.results[2].msg_id })]);
      const entry = (await activity()).find((row) => row.action === 'message.batch');
      expect(entry?.after).toMatchObject({ template_id: ws.templateId, messages: 2, recipients: 3 });
    });

    it("stops at the sender account's daily quota, per recipient", async () => {
      const small = await seedWorkspace(gateway, { dailyQuota: 2 });
      const smallDeveloper = await consoleUserIn(gateway, small.workspaceId, 'developer');
      const recipients = ['0912000011', '0912000012', '0912000013'].map((phone) => ({ phone, template_data: VALID_DATA }));
      const response = await smallDeveloper.request('POST', '/console/api/messages/batch', { body: { template_id: small.templateId, recipients } });
      expectStatus(response, 202);
      expect(response.body.accepted).toBe(2);
      expect(response.body.results[2]).toMatchObject({ status: 'error', error: expect.stringMatching(/^daily_quota_exceeded: /) });
    });

    it('replays under its Idempotency-Key and refuses more than 500 recipients', async () => {
      const key = unique('batch-idem-');
      const body = { recipients: [{ phone: '0912000021', template_data: VALID_DATA }] };
      const first = await batch(developer, body, { 'idempotency-key': key });
      const again = await batch(developer, body, { 'idempotency-key': key });
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const tooMany = Array.from({ length: 501 }, () => ({ phone: '0912000022', template_data: VALID_DATA }));
      expectError(await batch(developer, { recipients: tooMany }), 'invalid_request');
    });

    it('is refused to a viewer', async () => {
      const viewer = await consoleUserIn(gateway, ws.workspaceId, 'viewer');
      expectError(await batch(viewer, { recipients: [{ phone: '0912000031', template_data: VALID_DATA }] }), 'forbidden_role');
    });
  });
});
