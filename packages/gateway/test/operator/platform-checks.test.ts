/**
 * The operator verbs that ask the platform before they store anything, against a real simulator
 * over HTTP: connecting a sender account spends its refresh token on a token refresh and stores
 * the new pair; refused credentials or an unknown template store nothing; reconnecting asks the
 * platform with the stored credentials before the account may send again; `verify=false`
 * (`--no-verify`) stores without asking.
 */
import { startSimulator, type RunningSimulator, type Seed, type SeedOa } from '@tms/zns-sim';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { decryptSecret } from '../../src/lib/crypto.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { expectError } from '../api/helpers.ts';
import { waitFor } from '../wait-for.ts';
import { runTms } from './processes.ts';

const OA_COUNT = 20;

function simulatorSeed(): Seed {
  const oas: SeedOa[] = Array.from({ length: OA_COUNT }, (_, index) => ({
    oa_id: `43100000000000${String(index).padStart(3, '0')}`,
    name: `Check OA ${index}`,
    app_id: `20710000000000${String(index).padStart(3, '0')}`,
    app_secret: `check-app-secret-${index}`,
    oa_secret_key: `check-oa-secret-key-${index}`,
    refresh_token: `check-refresh-token-${index}`,
    rsa: null,
    templates: [
      {
        template_id: String(280_000 + index),
        name: `Delivery notice ${index}`,
        status: 'ENABLE',
        preview_url: `https://account.zalo.cloud/znspreview/check-${index}`,
        params: [
          { name: 'customer_name', type: 'STRING', required: true, min_length: 1, max_length: 30 },
          { name: 'eta', type: 'STRING', required: false, min_length: 0, max_length: 20 },
        ],
      },
    ],
  }));
  return { oas, recipient_rules: [] };
}

describe.each(STORE_KINDS)('operator changes checked with the platform (%s)', (kind) => {
  const seed = simulatorSeed();
  let sim: RunningSimulator;
  let gateway: TestGateway;
  let workspaceId: string;
  let nextOa = 0;

  beforeAll(async () => {
    sim = await startSimulator({ seed, eventsUrl: null });
    gateway = await startTestGateway(kind, { env: { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, ZNS_TIMEOUT_MS: '2000' } });
    const workspace = await gateway.admin('POST', '/workspaces', { name: 'platform checks' });
    workspaceId = workspace.body.id as string;
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  function takeOa(): SeedOa {
    const oa = seed.oas[nextOa];
    nextOa += 1;
    if (!oa) throw new Error('simulatorSeed has too few OAs for this suite');
    return oa;
  }

  const body = (oa: SeedOa, overrides: Record<string, unknown> = {}) => ({ name: oa.name, daily_quota: 1000, app_id: oa.app_id, app_secret: oa.app_secret, refresh_token: oa.refresh_token, ...overrides });
  const connect = (oa: SeedOa, query = '', overrides: Record<string, unknown> = {}) => gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oa.oa_id}${query}`, body(oa, overrides));
  const row = (oaId: string) => gateway.runtime.store.db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirst();
  const templateRow = (templateId: string) => gateway.runtime.store.db.selectFrom('templates').selectAll().where('template_id', '=', templateId).executeTakeFirst();
  const masterKey = (): Buffer => gateway.config.masterKey!;
  const templateOf = (oa: SeedOa) => oa.templates![0]!;

  describe('connecting a sender account', () => {
    it('spends the refresh token on a refresh and stores the pair the platform issued', async () => {
      const oa = takeOa();
      const issuedBefore = sim.control.stats().tokens.issued;
      const response = await connect(oa);
      expect(response.status, response.text).toBe(200);
      expect(response.body).toMatchObject({ oa_id: oa.oa_id, status: 'connected' });
      expect(sim.control.stats().tokens.issued).toBe(issuedBefore + 1);
      const platformRefreshToken = sim.control.oa(oa.oa_id).refresh_token!;
      expect(platformRefreshToken).not.toBe(oa.refresh_token);
      const stored = (await row(oa.oa_id))!;
      // The single-use token the operator gave is spent: only the rotated one can refresh again.
      expect(decryptSecret(stored.encrypted_refresh_token, masterKey())).toBe(platformRefreshToken);
      expect(stored.encrypted_access_token).not.toBeNull();
      expect(stored.access_token_expires_at).toBeGreaterThan(Date.now());
      // The stored access token works: a send with it is accepted without another refresh.
      const send = await gateway.runtime.platform.sendMessage(decryptSecret(stored.encrypted_access_token!, masterKey()), {
        kind: 'plain',
        recipient: '84912345678',
        templateId: templateOf(oa).template_id,
        templateData: { customer_name: 'Lan' },
        trackingId: `check-${oa.oa_id}`,
      });
      expect(send.ok).toBe(true);
    });

    it.each([
      ['a wrong app secret', { app_secret: 'not-the-secret' }],
      ['an unknown refresh token', { refresh_token: 'never-issued' }],
    ])('refuses %s with the platform code and reason, and stores nothing', async (_what, overrides) => {
      const oa = takeOa();
      const response = await connect(oa, '', overrides);
      expectError(response, 'sender_account_refused');
      expect(response.status).toBe(422);
      expect(response.body.error.message).toMatch(/-\d+ /);
      expect(await row(oa.oa_id)).toBeUndefined();
      // The operator's refresh token was not spent: connecting with the right credentials still works.
      expect((await connect(oa)).status).toBe(200);
    });

    it('answers platform_unavailable while the platform is down, stores nothing, and connects once it is back', async () => {
      const oa = takeOa();
      sim.control.setFaults({ error_rate_5xx: 1, scope: 'all' });
      try {
        const response = await connect(oa);
        expectError(response, 'platform_unavailable');
        expect(response.status).toBe(503);
        expect(await row(oa.oa_id)).toBeUndefined();
      } finally {
        sim.control.clearFaults();
      }
      expect((await connect(oa)).status).toBe(200);
    });

    it('with verify=false stores the credentials as given, without asking the platform', async () => {
      const oa = takeOa();
      const issuedBefore = sim.control.stats().tokens.issued;
      const response = await connect(oa, '?verify=false', { refresh_token: 'offline-refresh-token' });
      expect(response.status, response.text).toBe(200);
      expect(sim.control.stats().tokens.issued).toBe(issuedBefore);
      const stored = (await row(oa.oa_id))!;
      expect(decryptSecret(stored.encrypted_refresh_token, masterKey())).toBe('offline-refresh-token');
      expect(stored.encrypted_access_token).toBeNull();
    });

    it("never spends the refresh token on an account another workspace holds", async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      const other = await gateway.admin('POST', '/workspaces', { name: 'other' });
      sim.control.setRefreshToken(oa.oa_id, 'fresh-from-the-platform');
      const issuedBefore = sim.control.stats().tokens.issued;
      const taken = await gateway.admin('PUT', `/workspaces/${other.body.id}/sender-accounts/${oa.oa_id}`, body(oa, { refresh_token: 'fresh-from-the-platform' }));
      expectError(taken, 'sender_account_taken');
      expect(sim.control.stats().tokens.issued).toBe(issuedBefore);
      expect(sim.control.oa(oa.oa_id).refresh_token).toBe('fresh-from-the-platform');
    });
  });

  describe('reconnecting a sender account', () => {
    const reconnect = (oaId: string, query = '') => gateway.admin('POST', `/workspaces/${workspaceId}/sender-accounts/${oaId}/reconnect${query}`);
    const disconnect = (oaId: string) => gateway.admin('POST', `/workspaces/${workspaceId}/sender-accounts/${oaId}/disconnect`);

    it('reconnects once the platform accepts the stored credentials', async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      expect((await disconnect(oa.oa_id)).body.status).toBe('disconnected');
      const requestsBefore = sim.control.stats().requests.total;
      const response = await reconnect(oa.oa_id);
      expect(response.status, response.text).toBe(200);
      expect(response.body.status).toBe('connected');
      expect(sim.control.stats().requests.total).toBeGreaterThan(requestsBefore);
    });

    it('answers sender_account_refused when the platform revoked the refresh token, and the account then needs one', async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      await disconnect(oa.oa_id);
      sim.control.revokeRefreshToken(oa.oa_id);
      sim.control.expireAccessTokens(oa.oa_id);
      const response = await reconnect(oa.oa_id);
      expectError(response, 'sender_account_refused');
      expect((await row(oa.oa_id))!.status).toBe('relogin_required');
    });

    it("reconnects when the platform refuses the stored access token while this process still caches an older one", async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      // This process caches the account's token, as a send or a quota lookup does.
      const cached = await gateway.runtime.accessTokens.accessTokenFor(oa.oa_id);
      // Another process, finding that token refused, refreshes: the row now holds a newer token.
      const otherProcess = await createRuntime(gateway.config, { log: pino({ level: 'silent' }) });
      try {
        otherProcess.accessTokens.reportRejected(oa.oa_id, cached);
        expect(await otherProcess.accessTokens.accessTokenFor(oa.oa_id)).not.toBe(cached);
      } finally {
        await otherProcess.close();
      }
      expect((await disconnect(oa.oa_id)).body.status).toBe('disconnected');
      // The platform now refuses both tokens; the stored refresh token still works.
      sim.control.expireAccessTokens(oa.oa_id);
      const response = await reconnect(oa.oa_id);
      expect(response.status, response.text).toBe(200);
      expect(response.body.status).toBe('connected');
    });

    it('stays disconnected when the platform cannot be asked', async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      await disconnect(oa.oa_id);
      sim.control.setFaults({ error_rate_5xx: 1, scope: 'all' });
      try {
        expectError(await reconnect(oa.oa_id), 'platform_unavailable');
      } finally {
        sim.control.clearFaults();
      }
      expect((await row(oa.oa_id))!.status).toBe('disconnected');
      // The reconnect that did not hold is not in the audit log; the disconnect before it is.
      const audit = (await gateway.admin('GET', `/audit?workspace_id=${workspaceId}`)).body.entries as { action: string; target: string }[];
      expect(audit.filter((entry) => entry.target === oa.oa_id).map((entry) => entry.action)).toEqual(['sender_account.disconnect', 'sender_account.connect']);
      // Without the check it reconnects at once.
      expect((await reconnect(oa.oa_id, '?verify=false')).body.status).toBe('connected');
    });
  });

  describe('registering a template', () => {
    const register = (templateId: string, fields: Record<string, unknown>, query = '') => gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}${query}`, fields);

    it("stores the platform's name, status, params and preview with the operator's price", async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      const template = templateOf(oa);
      // What the operator typed differs from the platform: the platform's description wins.
      const response = await register(template.template_id, { oa_id: oa.oa_id, price: 450, template_type: 2, name: 'A guess', params: [] });
      expect(response.status, response.text).toBe(200);
      expect(response.body).toMatchObject({
        template_id: template.template_id,
        name: template.name,
        status: 'ENABLE',
        price: 450,
        preview_url: template.preview_url,
        params: [
          { name: 'customer_name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
          { name: 'eta', type: 'STRING', required: false, max_length: 20, min_length: 0 },
        ],
      });
      const stored = (await templateRow(template.template_id))!;
      expect(stored).toMatchObject({ template_type: 2, price_source: 'operator' });
      expect(stored.synced_at).not.toBeNull();
    });

    it('refuses a template the platform does not know for the account, with its code, and stores nothing', async () => {
      const oa = takeOa();
      const owner = takeOa();
      expect((await connect(oa)).status).toBe(200);
      const unknown = await register('289999', { oa_id: oa.oa_id, price: 300, template_type: 1 });
      expectError(unknown, 'template_refused');
      expect(unknown.body.error.message).toContain('-109');
      // Another OA's template is not this account's to send.
      const foreign = await register(templateOf(owner).template_id, { oa_id: oa.oa_id, price: 300, template_type: 1 });
      expectError(foreign, 'template_refused');
      expect(foreign.body.error.message).toContain('-117');
      expect(await templateRow('289999')).toBeUndefined();
      expect(await templateRow(templateOf(owner).template_id)).toBeUndefined();
    });

    it('with verify=false stores what the operator gave, and needs name, status and params', async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      const incomplete = await register('289998', { oa_id: oa.oa_id, price: 300, template_type: 1 }, '?verify=false');
      expectError(incomplete, 'invalid_request');
      expect(incomplete.body.error.message).toContain('name, status and params are required');
      const params = [{ name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 }];
      const offline = await register('289998', { oa_id: oa.oa_id, price: 300, template_type: 1, name: 'Offline', status: 'ENABLE', params }, '?verify=false');
      expect(offline.status, offline.text).toBe(200);
      expect(offline.body).toMatchObject({ name: 'Offline', params });
      expect((await templateRow('289998'))!.synced_at).toBeNull();
    });

    it('refuses to check a template of a disconnected account', async () => {
      const oa = takeOa();
      expect((await connect(oa)).status).toBe(200);
      // A warm access token in this process outlives the disconnect: the check must not rely on it.
      await gateway.runtime.accessTokens.accessTokenFor(oa.oa_id);
      await gateway.admin('POST', `/workspaces/${workspaceId}/sender-accounts/${oa.oa_id}/disconnect`);
      expectError(await register(templateOf(oa).template_id, { oa_id: oa.oa_id, price: 300, template_type: 1 }), 'sender_account_not_connected');
      expect(await templateRow(templateOf(oa).template_id)).toBeUndefined();
    });
  });

  describe('through tms admin', () => {
    let files: string;
    beforeAll(() => {
      files = mkdtempSync(join(tmpdir(), 'tms-platform-checks-'));
    });
    afterAll(() => rmSync(files, { recursive: true, force: true }));

    const env = () => ({
      ...gateway.database.env,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
      TMS_LOG_LEVEL: 'silent',
      ZNS_OAUTH_URL: sim.url,
      ZNS_API_URL: sim.url,
    });

    it('connects with a check, refuses what the platform refuses, and registers from the platform', async () => {
      const oa = takeOa();
      const secrets = join(files, `${oa.oa_id}.json`);
      const connectArgs = ['admin', 'sender-accounts', 'connect', workspaceId, '--oa-id', oa.oa_id, '--name', oa.name, '--daily-quota', '100', '--app-id', oa.app_id, '--secrets-file', secrets];
      writeFileSync(secrets, JSON.stringify({ app_secret: 'wrong', refresh_token: oa.refresh_token }), { mode: 0o600 });
      const refused = await runTms(connectArgs, env());
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('the platform refused the credentials');
      expect(await row(oa.oa_id)).toBeUndefined();

      writeFileSync(secrets, JSON.stringify({ app_secret: oa.app_secret, refresh_token: oa.refresh_token }), { mode: 0o600 });
      const connected = await runTms([...connectArgs, '--json'], env());
      expect(connected.code, connected.stderr).toBe(0);
      expect(decryptSecret((await row(oa.oa_id))!.encrypted_refresh_token, masterKey())).toBe(sim.control.oa(oa.oa_id).refresh_token);

      const templateFile = join(files, `${oa.oa_id}-template.json`);
      writeFileSync(templateFile, JSON.stringify({ template_id: templateOf(oa).template_id, oa_id: oa.oa_id, price: 320, template_type: 1 }));
      const registered = await runTms(['admin', 'templates', 'register', workspaceId, '--file', templateFile, '--json'], env());
      expect(registered.code, registered.stderr).toBe(0);
      expect(JSON.parse(registered.stdout)).toMatchObject({ name: templateOf(oa).name, price: 320, status: 'ENABLE' });
    }, 120_000);
  });
});

/**
 * The account stays disconnected while a reconnect asks the platform: a gateway with its workers
 * running accepts no send naming it and dispatches nothing on it, and a refusal leaves it needing
 * a new refresh token, never connected. The platform answers slowly, so the check can be watched.
 */
describe.each(STORE_KINDS)('a reconnect the platform refuses (%s)', (kind) => {
  const seed = simulatorSeed();
  const oa = seed.oas[0]!;
  const template = oa.templates![0]!;
  const PLATFORM_LATENCY_MS = 2000;
  let sim: RunningSimulator;
  let gateway: TestGateway;

  beforeAll(async () => {
    sim = await startSimulator({ seed, eventsUrl: null });
    gateway = await startTestGateway(kind, {
      worker: true,
      env: { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, ZNS_TIMEOUT_MS: '10000', TMS_DISPATCH_POLL_MS: '20', TMS_TEMPLATE_SYNC_MS: '0', TMS_PLATFORM_QUOTA_CACHE_MS: '0' },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const routeCount = (route: string): number => sim.control.stats().requests.by_route[route] ?? 0;

  it('never connects the account while the platform is asked, so nothing is accepted or dispatched on it', async () => {
    const workspaceId = (await gateway.admin('POST', '/workspaces', { name: 'reconnect watched' })).body.id as string;
    await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 100_000 });
    const account = `/workspaces/${workspaceId}/sender-accounts/${oa.oa_id}`;
    expect((await gateway.admin('PUT', account, { name: oa.name, daily_quota: 1000, app_id: oa.app_id, app_secret: oa.app_secret, refresh_token: oa.refresh_token })).status).toBe(200);
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${template.template_id}`, { oa_id: oa.oa_id, price: 300, template_type: 1 })).status).toBe(200);
    const apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send'] })).body.key as string;
    const send = (trackingId: string) =>
      gateway.request('POST', '/api/v1/messages/send', { key: apiKey, body: { phone: '0912345678', template_id: template.template_id, template_data: { customer_name: 'Lan' }, tracking_id: trackingId } });
    const status = async () => (await gateway.runtime.store.db.selectFrom('sender_accounts').select('status').where('oa_id', '=', oa.oa_id).executeTakeFirstOrThrow()).status;

    // The workers do send for this account while it is connected.
    expect((await send('while-connected')).status).toBe(202);
    await waitFor(() => sim.control.stats().sends.accepted, (accepted) => accepted === 1, 'the first message to reach the platform');

    expect((await gateway.admin('POST', `${account}/disconnect`)).body.status).toBe('disconnected');
    sim.control.revokeRefreshToken(oa.oa_id);
    sim.control.expireAccessTokens(oa.oa_id);
    sim.control.setFaults({ latency_ms: PLATFORM_LATENCY_MS, scope: 'all' });
    const sendsBefore = routeCount('POST /message/template');
    const quotaCallsBefore = routeCount('GET /message/quota');
    const refreshesBefore = routeCount('POST /v4/oa/access_token');
    try {
      let finished = false;
      const reconnecting = gateway.admin('POST', `${account}/reconnect`).finally(() => (finished = true));
      await waitFor(() => routeCount('GET /message/quota'), (count) => count > quotaCallsBefore, 'the reconnect to ask the platform');
      // Watched until the refused refresh token is about to be answered (it then marks the account relogin_required).
      const seen: { status: string; send: string }[] = [];
      while (!finished && routeCount('POST /v4/oa/access_token') === refreshesBefore) {
        const [now, attempt] = await Promise.all([status(), send(`during-check-${seen.length}`)]);
        seen.push({ status: now, send: attempt.status === 202 ? 'accepted' : attempt.body.error.type });
      }
      expect(seen.length).toBeGreaterThan(0);
      expect(seen).toEqual(seen.map(() => ({ status: 'disconnected', send: 'sender_account_not_connected' })));

      const refused = await reconnecting;
      expectError(refused, 'sender_account_refused');
      expect(refused.body.error.message).toContain('refused the stored credentials');
    } finally {
      sim.control.clearFaults();
    }
    expect(await status()).toBe('relogin_required');
    expect(routeCount('POST /message/template')).toBe(sendsBefore);
    expect(sim.control.stats().sends.received).toBe(1);
  }, 120_000);
});
