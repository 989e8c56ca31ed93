/** The console's templates and sender accounts pages: GET /console/api/templates and /console/api/sender-accounts. */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus, putTemplate, queueOne, unique } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';

const RSA_PUBLIC_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe.each(STORE_KINDS)('console catalog (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let viewer: ConsoleSession;
  let rsaOa: string;
  let disabled: string;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { price: 300, dailyQuota: 1_000 });
    rsaOa = unique('oarsa');
    const connected = await gateway.admin('PUT', `/workspaces/${ws.workspaceId}/sender-accounts/${rsaOa}?verify=false`, {
      name: 'Hoa Sen RSA',
      daily_quota: 50,
      default_mode: 'hashphone',
      app_id: 'app-rsa',
      app_secret: 'app-secret',
      refresh_token: 'refresh-token',
      rsa_public_key: RSA_PUBLIC_KEY,
    });
    expectStatus(connected, 200);
    disabled = unique('tpldisabled');
    await putTemplate(gateway, ws.workspaceId, disabled, {
      oa_id: rsaOa,
      status: 'DISABLE',
      name: 'Shipping update',
      template_type: 2,
      price: 550,
      preview_url: 'https://example.com/shipping',
      params: [
        { name: 'order', type: 'STRING', required: true, max_length: 20, min_length: 3 },
        { name: 'note', type: 'STRING', required: false, max_length: 100, min_length: 0 },
      ],
    });
    viewer = await consoleUserIn(gateway, ws.workspaceId, 'viewer');
  });
  afterAll(async () => gateway?.close());

  describe('GET /console/api/templates', () => {
    it('lists every template with params, price, preview link and sender account name', async () => {
      const response = await viewer.request('GET', '/console/api/templates');
      expectStatus(response, 200);
      expect(Object.keys(response.body)).toEqual(['templates']);
      const byId = new Map(response.body.templates.map((template: { template_id: string }) => [template.template_id, template]));
      expect(byId.size).toBe(2);
      expect(byId.get(disabled)).toEqual({
        template_id: disabled,
        name: 'Shipping update',
        status: 'DISABLE',
        template_type: 2,
        oa_id: rsaOa,
        oa_name: 'Hoa Sen RSA',
        preview_url: 'https://example.com/shipping',
        price: 550,
        params: [
          { name: 'order', type: 'STRING', required: true, max_length: 20, min_length: 3 },
          { name: 'note', type: 'STRING', required: false, max_length: 100, min_length: 0 },
        ],
      });
      expect(byId.get(ws.templateId)).toMatchObject({ status: 'ENABLE', price: 300, oa_id: ws.oaId });
    });

    it('filters by status and by sender account', async () => {
      const enabled = await viewer.request('GET', '/console/api/templates?status=ENABLE');
      expect(enabled.body.templates.map((template: { template_id: string }) => template.template_id)).toEqual([ws.templateId]);
      const ofRsaAccount = await viewer.request('GET', `/console/api/templates?oa_id=${rsaOa}`);
      expect(ofRsaAccount.body.templates.map((template: { template_id: string }) => template.template_id)).toEqual([disabled]);
    });

    it('refuses an unknown status with invalid_request', async () => {
      expectError(await viewer.request('GET', '/console/api/templates?status=LIVE'), 'invalid_request');
    });

    it('shows nothing of another workspace', async () => {
      const other = await seedWorkspace(gateway);
      const otherViewer = await consoleUserIn(gateway, other.workspaceId, 'viewer');
      const response = await otherViewer.request('GET', '/console/api/templates');
      expect(response.body.templates.map((template: { template_id: string }) => template.template_id)).toEqual([other.templateId]);
    });
  });

  describe('GET /console/api/sender-accounts', () => {
    it("shows each account's RSA public key as PEM (null when none) and today's quota", async () => {
      await queueOne(gateway, ws, { template_data: VALID_DATA });
      const response = await viewer.request('GET', '/console/api/sender-accounts');
      expectStatus(response, 200);
      const byId = new Map(response.body.sender_accounts.map((account: { oa_id: string }) => [account.oa_id, account]));
      expect(byId.get(rsaOa)).toEqual({
        oa_id: rsaOa,
        name: 'Hoa Sen RSA',
        status: 'connected',
        default_mode: 'hashphone',
        rsa_public_key: RSA_PUBLIC_KEY,
        quota: { oa_id: rsaOa, name: 'Hoa Sen RSA', daily_quota: 50, used: 0, remaining: 50, resets_at: expect.stringMatching(ISO_UTC_MS) },
      });
      const seeded = byId.get(ws.oaId) as { rsa_public_key: string | null; quota: { used: number; remaining: number; resets_at: string } };
      expect(seeded.rsa_public_key).toBeNull();
      expect(seeded.quota).toMatchObject({ daily_quota: 1_000, used: 1, remaining: 999 });
      // The next Vietnam midnight, i.e. 17:00 UTC.
      const resetsAt = Date.parse(seeded.quota.resets_at);
      expect(new Date(resetsAt).getUTCHours()).toBe(17);
      expect(resetsAt).toBeGreaterThan(Date.now());
      expect(resetsAt - Date.now()).toBeLessThanOrEqual(24 * 60 * 60 * 1000);
    });

    it('never shows a secret of the account', async () => {
      const response = await viewer.request('GET', '/console/api/sender-accounts');
      expect(response.text).not.toMatch(/app-secret|refresh-token|encrypted/);
    });
  });
});
