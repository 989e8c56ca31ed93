/**
 * OAuth access tokens per sender account, against a real simulator over HTTP and a real
 * database: refresh before expiry, the new refresh token stored (encrypted) before the access token
 * is used, one refresh at a time per OA within and across runtimes, relogin_required surfaced to the
 * operator, transient failures releasing the lease.
 */
import { startSimulator, type RunningSimulator, type Seed, type SeedOa } from '@tms/zns-sim';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret } from '../../src/lib/crypto.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { PlatformUnavailableError } from '../../src/platform/zns-client.ts';
import { AccessTokens, ReloginRequiredError, type AccessTokenDependencies } from '../../src/caches/access-tokens.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';

const OA_COUNT = 24;
const HOUR_MS = 60 * 60 * 1000;

/** One OA per test, each with its own app, refresh token and a one-param OTP template. */
function simulatorSeed(): Seed {
  const oas: SeedOa[] = Array.from({ length: OA_COUNT }, (_, index) => ({
    oa_id: `43000000000000${String(index).padStart(3, '0')}`,
    name: `Token test OA ${index}`,
    app_id: `20700000000000${String(index).padStart(3, '0')}`,
    app_secret: `app-secret-${index}`,
    oa_secret_key: `oa-secret-key-${index}`,
    refresh_token: `operator-refresh-token-${index}`,
    rsa: null,
    templates: [
      {
        template_id: String(270_000 + index),
        name: 'One-time password',
        params: [{ name: 'otp', type: 'STRING', required: true, min_length: 4, max_length: 10 }],
      },
    ],
  }));
  return { oas, recipient_rules: [] };
}

interface TestOa {
  oaId: string;
  appId: string;
  appSecret: string;
  refreshToken: string;
  templateId: string;
}

describe.each(STORE_KINDS)('access tokens on %s', (kind) => {
  let sim: RunningSimulator;
  let gateway: TestGateway;
  let workspaceId: string;
  const seed = simulatorSeed();
  let nextOa = 0;

  beforeAll(async () => {
    sim = await startSimulator({ seed, eventsUrl: null });
    gateway = await startTestGateway(kind, { env: { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url } });
    const workspace = await gateway.admin('POST', '/workspaces', { name: 'token tests' });
    expect(workspace.status, workspace.text).toBeLessThan(300);
    workspaceId = workspace.body.id;
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const deps = (): AccessTokenDependencies => gateway.runtime;
  const masterKey = (): Buffer => gateway.config.masterKey!;

  /** A simulator OA not used by any other test. */
  function takeOa(): TestOa {
    const oa = seed.oas[nextOa];
    nextOa += 1;
    if (!oa) throw new Error('simulatorSeed has too few OAs for this suite');
    return { oaId: oa.oa_id, appId: oa.app_id, appSecret: oa.app_secret, refreshToken: oa.refresh_token, templateId: oa.templates![0]!.template_id };
  }

  /** The operator connects (or reconnects) the OA through the admin API. */
  async function connect(oa: TestOa, refreshToken = oa.refreshToken): Promise<void> {
    const response = await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oa.oaId}?verify=false`, {
      name: `OA ${oa.oaId}`,
      daily_quota: 5000,
      app_id: oa.appId,
      app_secret: oa.appSecret,
      refresh_token: refreshToken,
    });
    expect(response.status, response.text).toBeLessThan(300);
  }

  async function connectedOa(): Promise<TestOa> {
    const oa = takeOa();
    await connect(oa);
    return oa;
  }

  const refreshes = (): number => sim.control.stats().tokens.issued;
  const refusals = (): number => sim.control.stats().tokens.token_requests_rejected;

  async function row(oaId: string) {
    return gateway.runtime.store.db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirstOrThrow();
  }

  async function setRow(oaId: string, changes: { access_token_expires_at?: number | null; token_refresh_lease_until?: number | null }): Promise<void> {
    await gateway.runtime.store.db.updateTable('sender_accounts').set(changes).where('oa_id', '=', oaId).execute();
  }

  async function operatorView(oaId: string) {
    const response = await gateway.admin('GET', `/workspaces/${workspaceId}/sender-accounts`);
    expect(response.status, response.text).toBe(200);
    return (response.body.sender_accounts as { oa_id: string; status: string; token_problem: string | null }[]).find((account) => account.oa_id === oaId);
  }

  /** A real send with the token: the platform accepts it or answers its error code. */
  async function sendWith(runtime: Runtime, oa: TestOa, token: string) {
    return runtime.platform.sendMessage(token, {
      kind: 'plain',
      recipient: '84912345678',
      templateId: oa.templateId,
      templateData: { otp: '123456' },
      trackingId: `tok-${oa.oaId}-${Math.random().toString(16).slice(2, 10)}`,
    });
  }

  it('first call refreshes with the operator-given token and stores the new pair encrypted', async () => {
    const oa = await connectedOa();
    expect(await row(oa.oaId)).toMatchObject({ encrypted_access_token: null, access_token_expires_at: null, status: 'connected' });
    const before = refreshes();

    const token = await new AccessTokens(deps()).accessTokenFor(oa.oaId);

    expect(refreshes()).toBe(before + 1);
    const stored = await row(oa.oaId);
    const platformRefreshToken = sim.control.oa(oa.oaId).refresh_token!;
    expect(platformRefreshToken).not.toBe(oa.refreshToken);
    expect(decryptSecret(stored.encrypted_refresh_token, masterKey())).toBe(platformRefreshToken);
    expect(decryptSecret(stored.encrypted_access_token!, masterKey())).toBe(token);
    expect(stored.encrypted_refresh_token).not.toContain(platformRefreshToken);
    expect(stored.encrypted_access_token).not.toContain(token);
    // expires_in arrives as the string "90000": 25 hours.
    expect(stored.access_token_expires_at).toBeGreaterThan(Date.now() + 24 * HOUR_MS);
    expect(stored).toMatchObject({ status: 'connected', token_problem: null, token_refresh_lease_until: null });
    expect(await sendWith(gateway.runtime, oa, token)).toMatchObject({ ok: true });
  });

  it('a second call uses the cached token, a new manager the stored one, without another refresh', async () => {
    const oa = await connectedOa();
    const tokens = new AccessTokens(deps());
    const first = await tokens.accessTokenFor(oa.oaId);
    const before = refreshes();

    expect(await tokens.accessTokenFor(oa.oaId)).toBe(first);
    expect(await new AccessTokens(deps()).accessTokenFor(oa.oaId)).toBe(first);
    expect(refreshes()).toBe(before);
  });

  it('refreshes a cached token before it expires, once it is within the margin', async () => {
    const oa = await connectedOa();
    let now = Date.now();
    const tokens = new AccessTokens({ ...deps(), clock: () => now }, { refreshMarginMs: 10 * 60_000 });
    const first = await tokens.accessTokenFor(oa.oaId);
    const expiresAt = (await row(oa.oaId)).access_token_expires_at!;
    const before = refreshes();

    now = expiresAt - 11 * 60_000; // just outside the margin: still the same token
    expect(await tokens.accessTokenFor(oa.oaId)).toBe(first);
    expect(refreshes()).toBe(before);

    now = expiresAt - 9 * 60_000; // inside the margin, before expiry: refresh
    const second = await tokens.accessTokenFor(oa.oaId);
    expect(second).not.toBe(first);
    expect(refreshes()).toBe(before + 1);
    expect(decryptSecret((await row(oa.oaId)).encrypted_access_token!, masterKey())).toBe(second);
  });

  it('a token that lives less than twice the margin is refreshed at half its life, not on every call', async () => {
    const oa = await connectedOa();
    const start = Date.now();
    let now = start;
    // The simulator's tokens live 25 h; a 30 h margin would otherwise refresh on every call.
    const tokens = new AccessTokens({ ...deps(), clock: () => now }, { refreshMarginMs: 30 * HOUR_MS });
    const before = refreshes();
    const first = await tokens.accessTokenFor(oa.oaId);
    expect(await tokens.accessTokenFor(oa.oaId)).toBe(first);
    now = start + 12 * HOUR_MS;
    expect(await tokens.accessTokenFor(oa.oaId)).toBe(first);
    expect(refreshes()).toBe(before + 1);

    now = start + 13 * HOUR_MS;
    expect(await tokens.accessTokenFor(oa.oaId)).not.toBe(first);
    expect(refreshes()).toBe(before + 2);
  });

  it('refreshes a stored token whose expiry in the row is near', async () => {
    const oa = await connectedOa();
    const first = await new AccessTokens(deps()).accessTokenFor(oa.oaId);
    await setRow(oa.oaId, { access_token_expires_at: Date.now() + 5 * 60_000 });
    const before = refreshes();

    const second = await new AccessTokens(deps()).accessTokenFor(oa.oaId);

    expect(second).not.toBe(first);
    expect(refreshes()).toBe(before + 1);
    expect((await row(oa.oaId)).access_token_expires_at).toBeGreaterThan(Date.now() + 24 * HOUR_MS);
    expect(await sendWith(gateway.runtime, oa, second)).toMatchObject({ ok: true });
  });

  it('20 concurrent calls in one process share one refresh', async () => {
    const oa = await connectedOa();
    const tokens = new AccessTokens(deps());
    const before = refreshes();

    const results = await Promise.all(Array.from({ length: 20 }, () => tokens.accessTokenFor(oa.oaId)));

    expect(new Set(results).size).toBe(1);
    expect(refreshes()).toBe(before + 1);
  });

  it('managers that share only the database take turns through the lease: one refresh', async () => {
    const oa = await connectedOa();
    // A slow platform keeps the winner's refresh in flight while the others find the lease taken.
    sim.control.setFaults({ latency_ms: 150, scope: 'all' });
    const before = refreshes();
    try {
      const managers = Array.from({ length: 5 }, () => new AccessTokens(deps(), { waitStepMs: 10 }));
      const results = await Promise.all(managers.map((manager) => manager.accessTokenFor(oa.oaId)));
      expect(new Set(results).size).toBe(1);
    } finally {
      sim.control.clearFaults();
    }
    expect(refreshes()).toBe(before + 1);
    expect((await row(oa.oaId)).token_refresh_lease_until).toBeNull();
  });

  it('two runtimes on the same database race: exactly one refresh, both send with their token', async () => {
    const oa = await connectedOa();
    const log = pino({ level: 'silent' });
    const first = await createRuntime(gateway.config, { log });
    const second = await createRuntime(gateway.config, { log });
    try {
      sim.control.setFaults({ latency_ms: 150, scope: 'all' });
      const before = refreshes();
      const inFirst = new AccessTokens(first, { waitStepMs: 10 });
      const inSecond = new AccessTokens(second, { waitStepMs: 10 });
      let tokens: string[];
      try {
        tokens = await Promise.all([
          inFirst.accessTokenFor(oa.oaId),
          inSecond.accessTokenFor(oa.oaId),
          inFirst.accessTokenFor(oa.oaId),
          inSecond.accessTokenFor(oa.oaId),
        ]);
      } finally {
        sim.control.clearFaults();
      }
      expect(refreshes()).toBe(before + 1);
      expect(new Set(tokens).size).toBe(1);
      expect(await sendWith(first, oa, tokens[0]!)).toMatchObject({ ok: true });
      expect(await sendWith(second, oa, tokens[1]!)).toMatchObject({ ok: true });
      expect(decryptSecret((await row(oa.oaId)).encrypted_refresh_token, masterKey())).toBe(sim.control.oa(oa.oaId).refresh_token);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('waits out the lease of a holder that crashed, then refreshes', async () => {
    const oa = await connectedOa();
    await setRow(oa.oaId, { token_refresh_lease_until: Date.now() + 300 });
    const before = refreshes();

    const token = await new AccessTokens(deps(), { leaseMs: 1000, waitStepMs: 20 }).accessTokenFor(oa.oaId);

    expect(refreshes()).toBe(before + 1);
    expect(await sendWith(gateway.runtime, oa, token)).toMatchObject({ ok: true });
    expect((await row(oa.oaId)).token_refresh_lease_until).toBeNull();
  });

  it('gives up for now when another holder keeps the lease past the bounded wait', async () => {
    const oa = await connectedOa();
    const heldUntil = Date.now() + 10 * 60_000;
    await setRow(oa.oaId, { token_refresh_lease_until: heldUntil });
    const before = refreshes();

    await expect(new AccessTokens(deps(), { leaseMs: 100, waitStepMs: 20 }).accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(PlatformUnavailableError);

    expect(refreshes()).toBe(before);
    expect(await row(oa.oaId)).toMatchObject({ token_refresh_lease_until: heldUntil, status: 'connected' });
  });

  it('a revoked refresh token marks the OA relogin_required for the operator; reconnecting clears it', async () => {
    const oa = await connectedOa();
    sim.control.revokeRefreshToken(oa.oaId);
    const tokens = new AccessTokens(deps());

    const failure = await tokens.accessTokenFor(oa.oaId).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ReloginRequiredError);
    expect(failure).toMatchObject({ oaId: oa.oaId, reason: expect.stringContaining('-14014') });

    const view = await operatorView(oa.oaId);
    expect(view).toMatchObject({ status: 'relogin_required', token_problem: expect.stringContaining('-14014') });
    expect(await row(oa.oaId)).toMatchObject({ token_refresh_lease_until: null, encrypted_access_token: null });

    // Further calls do not go to the platform at all.
    const refusedBefore = refusals();
    const issuedBefore = refreshes();
    await expect(tokens.accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(ReloginRequiredError);
    await expect(new AccessTokens(deps()).accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(ReloginRequiredError);
    expect(refusals()).toBe(refusedBefore);
    expect(refreshes()).toBe(issuedBefore);

    // The OA admin consents again; the operator connects the account with the new refresh token.
    sim.control.setRefreshToken(oa.oaId, `reconsented-${oa.oaId}`);
    await connect(oa, `reconsented-${oa.oaId}`);
    expect(await operatorView(oa.oaId)).toMatchObject({ status: 'connected', token_problem: null });

    const token = await tokens.accessTokenFor(oa.oaId);
    expect(refreshes()).toBe(issuedBefore + 1);
    expect(await sendWith(gateway.runtime, oa, token)).toMatchObject({ ok: true });
  });

  it('an account connected with a wrong refresh token needs the operator', async () => {
    const oa = takeOa();
    await connect(oa, 'not-the-refresh-token');

    await expect(new AccessTokens(deps()).accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(ReloginRequiredError);

    expect(await operatorView(oa.oaId)).toMatchObject({ status: 'relogin_required', token_problem: expect.stringMatching(/refresh token/) });
    // The simulator still holds the OA's real refresh token: nothing was spent.
    expect(sim.control.oa(oa.oaId).refresh_token).toBe(oa.refreshToken);
  });

  it('an unknown OA needs the operator and never reaches the platform', async () => {
    const before = refusals() + refreshes();
    await expect(new AccessTokens(deps()).accessTokenFor('no-such-oa')).rejects.toBeInstanceOf(ReloginRequiredError);
    expect(refusals() + refreshes()).toBe(before);
  });

  it('an OAuth outage is PlatformUnavailableError and releases the lease; a later call succeeds', async () => {
    const oa = await connectedOa();
    const tokens = new AccessTokens(deps());
    sim.control.setFaults({ error_rate_5xx: 1, scope: 'all' });
    try {
      await expect(tokens.accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(PlatformUnavailableError);
      await expect(tokens.accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(PlatformUnavailableError);
    } finally {
      sim.control.clearFaults();
    }
    expect(await row(oa.oaId)).toMatchObject({ token_refresh_lease_until: null, status: 'connected', token_problem: null, encrypted_access_token: null });
    expect(sim.control.oa(oa.oaId).refresh_token).toBe(oa.refreshToken);
    const before = refreshes();

    const token = await tokens.accessTokenFor(oa.oaId);

    expect(refreshes()).toBe(before + 1);
    expect(await sendWith(gateway.runtime, oa, token)).toMatchObject({ ok: true });
  });

  it("the platform's 'unknown error, try later' answer is transient too, not a re-login", async () => {
    const oa = await connectedOa();
    const tokens = new AccessTokens(deps());
    sim.control.setFaults({ unknown_error_rate: 1, scope: 'all' });
    try {
      await expect(tokens.accessTokenFor(oa.oaId)).rejects.toBeInstanceOf(PlatformUnavailableError);
    } finally {
      sim.control.clearFaults();
    }
    expect(await operatorView(oa.oaId)).toMatchObject({ status: 'connected', token_problem: null });
    expect((await row(oa.oaId)).token_refresh_lease_until).toBeNull();
    expect(await sendWith(gateway.runtime, oa, await tokens.accessTokenFor(oa.oaId))).toMatchObject({ ok: true });
  });

  it('reportRejected makes the next call refresh; a stale report is ignored', async () => {
    const oa = await connectedOa();
    const tokens = new AccessTokens(deps());
    const first = await tokens.accessTokenFor(oa.oaId);
    sim.control.expireAccessTokens(oa.oaId);
    const refused = await sendWith(gateway.runtime, oa, first);
    expect(refused).toMatchObject({ ok: false, code: -124 });
    const before = refreshes();

    tokens.reportRejected(oa.oaId, first);
    const second = await tokens.accessTokenFor(oa.oaId);

    expect(second).not.toBe(first);
    expect(refreshes()).toBe(before + 1);
    expect(await sendWith(gateway.runtime, oa, second)).toMatchObject({ ok: true });

    // A late report about the old token does not throw away the new one.
    tokens.reportRejected(oa.oaId, first);
    expect(await tokens.accessTokenFor(oa.oaId)).toBe(second);
    expect(refreshes()).toBe(before + 1);
  });

  it('a rejected token still in the row is not taken from it again', async () => {
    const oa = await connectedOa();
    const tokens = new AccessTokens(deps());
    const first = await tokens.accessTokenFor(oa.oaId);
    const before = refreshes();

    // The cache is empty in a new manager; the row still holds the refused token.
    const other = new AccessTokens(deps());
    other.reportRejected(oa.oaId, first);
    const second = await other.accessTokenFor(oa.oaId);

    expect(second).not.toBe(first);
    expect(refreshes()).toBe(before + 1);
    // The first manager's cached token is still valid on the platform (old tokens live until expiry).
    expect(await tokens.accessTokenFor(oa.oaId)).toBe(first);
  });
});
