/**
 * GET /api/v1/quota and the batch cap from the platform's own quota (docs/api.md daily quota; docs/zns-platform.md): real gateway, real simulator over HTTP,
 * SQLite and PostgreSQL. Each test gets its own simulator and gateway, so quotas start clean.
 * Dispatch is driven round by round here (no worker), so that "accepted but not sent yet" is a
 * state the test controls rather than a race.
 */
import { randomBytes } from 'node:crypto';
import { signEvent, startSimulator, type RunningSimulator, type Seed } from '@tms/zns-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageDispatcher } from '../../src/workers/dispatch/engine.ts';
import { STORE_KINDS, startTestGateway, type TestGateway, type TestResponse } from '../harness.ts';
import { waitFor as waitUntil } from '../wait-for.ts';

const MAIN = { oaId: '4318269720189302001', appId: '2074138120372623001', appSecret: 'main-app-secret', oaSecretKey: 'main-oa-secret-key', refreshToken: 'main-refresh-0001', templateId: '270001' };
const OTHER = { oaId: '4318269720189302002', appId: '2074138120372623002', appSecret: 'other-app-secret', oaSecretKey: 'other-oa-secret-key', refreshToken: 'other-refresh-0001', templateId: '270002' };
/** What the operator configured: larger than the platform's tiers below, so a test can tell them apart. */
const CONFIGURED_DAILY_QUOTA = { [MAIN.oaId]: 1000, [OTHER.oaId]: 50 };
const PLATFORM_DAILY_QUOTA = { [MAIN.oaId]: 20, [OTHER.oaId]: 7 };

function seed(): Seed {
  const oa = (account: typeof MAIN) => ({
    oa_id: account.oaId,
    name: `OA ${account.oaId}`,
    app_id: account.appId,
    app_secret: account.appSecret,
    oa_secret_key: account.oaSecretKey,
    refresh_token: account.refreshToken,
    daily_quota: PLATFORM_DAILY_QUOTA[account.oaId],
    rsa: null,
    templates: [{ template_id: account.templateId, name: 'One-time password', params: [{ name: 'otp', type: 'STRING', required: true, min_length: 4, max_length: 10 }] }],
  });
  return { oas: [oa(MAIN), oa(OTHER)], recipient_rules: [] };
}

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

interface QuotaEntry {
  oa_id: string;
  oa_name: string;
  daily_quota: number;
  remaining: number;
  used: number;
  reset_at: string;
  error: string | null;
}

describe.each(STORE_KINDS)('daily quota from the platform (%s)', (kind) => {
  let simulator: RunningSimulator | undefined;
  let gateway: TestGateway | undefined;
  let apiKey: string;
  let workspaceId: string;

  afterEach(async () => {
    await gateway?.close();
    await simulator?.close();
    gateway = undefined;
    simulator = undefined;
  });

  /** A simulator with both OAs and a gateway pointing at it, with both accounts connected (MAIN's app secret optionally wrong). */
  async function setUp(options: { env?: Record<string, string>; otherAppSecret?: string } = {}): Promise<{ gateway: TestGateway; simulator: RunningSimulator }> {
    simulator = await startSimulator({ seed: seed(), eventsUrl: null });
    gateway = await startTestGateway(kind, {
      env: {
        ZNS_OAUTH_URL: simulator.url,
        ZNS_API_URL: simulator.url,
        ZNS_TIMEOUT_MS: '1000',
        TMS_PLATFORM_QUOTA_CACHE_MS: '100',
        TMS_PLATFORM_QUOTA_RETRY_MS: '100',
        ...options.env,
      },
    });
    workspaceId = (await gateway.admin('POST', '/workspaces', { name: `quota ${randomBytes(3).toString('hex')}` })).body.id;
    expect((await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 10_000_000 })).status).toBe(201);
    for (const account of [MAIN, OTHER]) {
      const connected = await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${account.oaId}?verify=false`, {
        name: `OA ${account.oaId}`,
        daily_quota: CONFIGURED_DAILY_QUOTA[account.oaId],
        app_id: account.appId,
        app_secret: account === OTHER && options.otherAppSecret !== undefined ? options.otherAppSecret : account.appSecret,
        refresh_token: account.refreshToken,
        oa_secret_key: account.oaSecretKey,
      });
      expect(connected.status, connected.text).toBe(200);
      const template = await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${account.templateId}?verify=false`, {
        name: 'One-time password',
        status: 'ENABLE',
        template_type: 2,
        oa_id: account.oaId,
        preview_url: 'https://example.com/otp',
        price: 250,
        params: [{ name: 'otp', type: 'STRING', required: true, max_length: 10, min_length: 4 }],
      });
      expect(template.status, template.text).toBe(200);
    }
    apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key;
    return { gateway, simulator };
  }

  const quotas = async (): Promise<Record<string, QuotaEntry>> => {
    const response = await gateway!.request('GET', '/api/v1/quota', { key: apiKey });
    expect(response.status, response.text).toBe(200);
    expect(response.body.count).toBe(2);
    return Object.fromEntries((response.body.quotas as QuotaEntry[]).map((entry) => [entry.oa_id, entry]));
  };

  let phoneCounter = 0;
  const batch = async (account: typeof MAIN, count: number, extra: Record<string, unknown> = {}): Promise<TestResponse> => {
    const recipients = Array.from({ length: count }, () => {
      phoneCounter += 1;
      return { phone: `0912${String(phoneCounter).padStart(6, '0')}`, template_data: { otp: '123456' } };
    });
    const response = await gateway!.request('POST', '/api/v1/messages/batch', { key: apiKey, body: { template_id: account.templateId, recipients, ...extra } });
    expect(response.status, response.text).toBe(202);
    return response;
  };

  /** Dispatches every due message to the simulator, round by round, as a worker would. */
  const dispatchAll = async (): Promise<void> => {
    const dispatcher = new MessageDispatcher(gateway!.runtime, gateway!.runtime.accessTokens);
    while ((await dispatcher.dispatchRound()) > 0);
  };

  const platformRemaining = (oaId: string) => simulator!.control.getQuota(oaId).remaining_quota;
  const quotaLookups = () => simulator!.control.stats().requests.by_route['GET /message/quota'] ?? 0;

  /** Polls GET /quota until two lookups have started since now: the cache then holds figures read after this point. */
  const freshQuotas = async (): Promise<Record<string, QuotaEntry>> => {
    const before = quotaLookups();
    await waitFor(quotas, () => quotaLookups() >= before + 2, 'two quota lookups');
    return quotas();
  };

  it("reports each sender account's quota from the platform, not the configured one", async () => {
    await setUp();
    const entries = await quotas();
    expect(entries[MAIN.oaId]).toEqual({
      oa_id: MAIN.oaId,
      oa_name: `OA ${MAIN.oaId}`,
      daily_quota: 20,
      used: 0,
      remaining: 20,
      reset_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T00:00:00\.000\+07:00$/),
      error: null,
    });
    expect(entries[OTHER.oaId]).toMatchObject({ daily_quota: 7, used: 0, remaining: 7, error: null });
  });

  it('follows the platform after sends: queued messages count once, and again once after they are sent', async () => {
    await setUp();
    expect((await batch(MAIN, 5)).body.accepted).toBe(5);
    // Queued, not yet at the platform: the platform still has 20 left, we have 5 outstanding.
    expect(platformRemaining(MAIN.oaId)).toBe(20);
    expect((await freshQuotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 5, remaining: 15, error: null });

    await dispatchAll();
    // Sent: the platform counts them now, and they are no longer outstanding here. Not 10 left.
    expect(platformRemaining(MAIN.oaId)).toBe(15);
    expect((await freshQuotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 5, remaining: 15, error: null });
    const next = await batch(MAIN, 20);
    expect(next.body.accepted).toBe(15);
    expect(next.body.results.filter((result: { status: string }) => result.status === 'queued')).toHaveLength(15);
  });

  it("caps a batch at the platform's remaining quota even when the configured daily quota is larger", async () => {
    await setUp();
    // Another system sent 16 through this OA today: 4 left, although the operator configured 1000.
    simulator!.control.setQuota(MAIN.oaId, { used_today: 16 });
    const response = await batch(MAIN, 6);
    expect(response.body.accepted).toBe(4);
    expect(response.body.results.slice(0, 4).every((result: { status: string }) => result.status === 'queued')).toBe(true);
    for (const result of response.body.results.slice(4)) {
      expect(result).toEqual({ phone: expect.any(String), status: 'error', error: expect.stringMatching(/^daily_quota_exceeded: .*\(daily quota 20\)/) });
    }
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 20, remaining: 0 });

    await dispatchAll();
    expect(platformRemaining(MAIN.oaId)).toBe(0);
    expect((await freshQuotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 20, remaining: 0, error: null });
    expect((await batch(MAIN, 2)).body.accepted).toBe(0);
  });

  it("gives a scheduled batch for another day the platform's tier, not today's remaining", async () => {
    await setUp();
    simulator!.control.setQuota(MAIN.oaId, { used_today: 16 });
    const tomorrow = new Date(Date.now() + 26 * 60 * 60 * 1000).toISOString();
    const response = await batch(MAIN, 25, { send_at: tomorrow });
    expect(response.body.accepted).toBe(20);
    expect(response.body.results[24].error).toMatch(/^daily_quota_exceeded: /);
    // Today is untouched by it.
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 16, remaining: 4 });
  });

  it('sees a quota changed at the platform once the cache expires', async () => {
    await setUp();
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 0, remaining: 20 });
    simulator!.control.setQuota(MAIN.oaId, { daily_quota: 30, used_today: 3 });
    const changed = await waitFor(quotas, (entries) => entries[MAIN.oaId]!.daily_quota === 30, 'the new tier');
    expect(changed[MAIN.oaId]).toMatchObject({ daily_quota: 30, used: 3, remaining: 27, error: null });
    expect(changed[OTHER.oaId]).toMatchObject({ daily_quota: 7, used: 0, remaining: 7, error: null });
  });

  it('never caps a batch with an expired figure: the first batch after expiry waits for a fresh one', async () => {
    await setUp({ env: { TMS_PLATFORM_QUOTA_CACHE_MS: '300' } });
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, remaining: 20, error: null });
    // Another system uses 16 of the 20 meanwhile, and nothing asks the platform until the figure expired.
    simulator!.control.setQuota(MAIN.oaId, { used_today: 16 });
    await new Promise((resolve) => setTimeout(resolve, 450));
    const response = await batch(MAIN, 6);
    expect(response.body.accepted).toBe(4);
    expect(response.body.results[5].error).toMatch(/^daily_quota_exceeded: /);
  });

  it('reports a sender account that cannot log in with an error and its configured figures; the others are fine', async () => {
    await setUp({ otherAppSecret: 'not-the-app-secret' });
    const entries = await quotas();
    expect(entries[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 0, remaining: 20, error: null });
    expect(entries[OTHER.oaId]).toMatchObject({ daily_quota: 50, used: 0, remaining: 50, error: expect.stringMatching(/^sender account needs re-login: .*-14004/) });
    // Acceptance falls back to the configured daily quota rather than refusing the batch.
    expect((await batch(OTHER, 3)).body.accepted).toBe(3);
    expect((await quotas())[OTHER.oaId]).toMatchObject({ daily_quota: 50, used: 3, remaining: 47, error: expect.stringMatching(/re-login/) });
  });

  it('falls back to the configured quota while the platform is down, and returns to its figures after', async () => {
    await setUp();
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, error: null });
    simulator!.control.setFaults({ outage_from: 0, outage_until: Date.now() + 3_600_000, scope: 'business' });
    const down = await waitFor(quotas, (entries) => entries[MAIN.oaId]!.error !== null && entries[OTHER.oaId]!.error !== null, 'the outage to show');
    expect(down[MAIN.oaId]).toMatchObject({ daily_quota: 1000, used: 0, remaining: 1000, error: expect.stringMatching(/^the platform is unavailable: .*503/) });
    expect(down[OTHER.oaId]).toMatchObject({ daily_quota: 50, used: 0, remaining: 50, error: expect.stringMatching(/^the platform is unavailable: /) });
    // Not refused because the platform is briefly down: the configured 1000 applies meanwhile.
    expect((await batch(MAIN, 25)).body.accepted).toBe(25);

    simulator!.control.clearFaults();
    const back = await waitFor(quotas, (entries) => entries[MAIN.oaId]!.error === null, 'the platform to answer again');
    // The platform sent none of the 25 yet: 20 - 25 leaves nothing, and no more is accepted.
    expect(back[MAIN.oaId]).toMatchObject({ daily_quota: 20, used: 25, remaining: 0, error: null });
    expect((await batch(MAIN, 1)).body.accepted).toBe(0);
  });

  it('does not let a platform that does not answer hold up GET /quota or a batch beyond the wait bound', async () => {
    await setUp({ env: { ZNS_TIMEOUT_MS: '300' } });
    simulator!.control.setFaults({ outage_from: 0, outage_until: Date.now() + 3_600_000, outage_mode: 'timeout', timeout_ms: 5_000, scope: 'business' });
    const entries = await quotas();
    expect(entries[MAIN.oaId]).toMatchObject({ daily_quota: 1000, remaining: 1000, error: expect.stringMatching(/platform/) });
    expect((await batch(MAIN, 2)).body.accepted).toBe(2);
  });

  it('asks the platform again at once after a signed change_oa_daily_quota event', async () => {
    // A cache that would otherwise outlive the test: only the event can refresh it.
    await setUp({ env: { TMS_PLATFORM_QUOTA_CACHE_MS: '3600000' } });
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, remaining: 20 });
    simulator!.control.setQuota(MAIN.oaId, { daily_quota: 40 });
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 20, remaining: 20 });

    const timestamp = String(Date.now());
    const raw = JSON.stringify({ app_id: MAIN.appId, oaId: MAIN.oaId, event_name: 'change_oa_daily_quota', quota: { prev_value: '20', new_value: '40' }, timestamp });
    const posted = await gateway!.request('POST', '/platform/zns/events', {
      rawBody: raw,
      headers: { 'content-type': 'application/json', 'x-zevent-signature': `mac=${signEvent(MAIN.appId, raw, timestamp, MAIN.oaSecretKey)}` },
    });
    expect(posted.status, posted.text).toBe(200);
    expect((await quotas())[MAIN.oaId]).toMatchObject({ daily_quota: 40, used: 0, remaining: 40, error: null });
  });
});
