/**
 * Template sync against the ZNS simulator over HTTP, on both stores: the platform's
 * templates become ours with params, status and price; the operator's price wins; status changes
 * show after the next sync and in the public API; the admin route, the `tms admin templates sync`
 * command and the worker's schedule all sync; an unavailable platform changes nothing.
 */
import { readFileSync } from 'node:fs';
import { DEMO_SEED_PATH, startSimulator, type Faults, type RunningSimulator, type Seed, type SeedOa, type SeedTemplate } from '@tms/zns-sim';
import type { Static } from 'typebox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccessTokens } from '../../src/caches/access-tokens.ts';
import type { TemplateSyncResultSchema } from '../../src/http/routes/admin/admin-schemas.ts';
import { createContext } from '../../src/services/context.ts';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { syncTemplates } from '../../src/services/template-sync.ts';
import { templateSyncTask } from '../../src/workers/template-sync.ts';
import { STORE_KINDS, SCOPES_ALL, startTestGateway, type TestGateway } from '../harness.ts';
import { expectError } from '../api/helpers.ts';
import { killAllTms, runAdminJson, runTms } from '../operator/processes.ts';

const PROCESS_TIMEOUT_MS = 120_000;
const DEMO_OA = DEMO_SENDER_ACCOUNT.oa_id;
/** An OA with more templates than one page of GET /template/all (limit 100). */
const MANY_TEMPLATES = 130;

function param(name: string, maxLength: number, required = true, minLength = 1) {
  return { name, type: 'STRING', required, min_length: minLength, max_length: maxLength };
}

/** Two templates of OA number `index`: ids 26<index>01 and 26<index>02, platform prices "800.0" and "450". */
function twoTemplates(index: number): SeedTemplate[] {
  const base = 260_000 + index * 100;
  return [
    {
      template_id: String(base + 1),
      name: `Order shipped ${index}`,
      status: 'ENABLE',
      template_type: 1,
      price: '800.0',
      preview_url: `https://account.zalo.cloud/znspreview/sync-${index}-1`,
      params: [param('customer_name', 30), param('tracking_code', 20), param('note', 100, false, 0)],
    },
    {
      template_id: String(base + 2),
      name: `Payment received ${index}`,
      status: 'ENABLE',
      template_type: 3,
      price: '450',
      preview_url: `https://account.zalo.cloud/znspreview/sync-${index}-2`,
      params: [param('amount', 20)],
    },
  ];
}

function syncOa(index: number, templates: SeedTemplate[] = twoTemplates(index)): SeedOa {
  const suffix = String(index).padStart(3, '0');
  return {
    oa_id: `4319000000000000${suffix}`,
    name: `Sync OA ${index}`,
    app_id: `2079000000000000${suffix}`,
    app_secret: `sync-app-secret-${index}`,
    oa_secret_key: `sync-oa-secret-key-${index}`,
    refresh_token: `sync-refresh-token-${index}`,
    rsa: null,
    templates,
  };
}

const PAGING_OA = 9;
const manyTemplates: SeedTemplate[] = Array.from({ length: MANY_TEMPLATES }, (_, index) => ({
  template_id: String(280_000 + index),
  name: `Bulk template ${index}`,
  price: '300',
  params: [param('code', 10)],
}));

/** The bundled demo seed (templates 250001–250003), plus OAs of our own, one per test. */
function simulatorSeed(): Seed {
  const demo = JSON.parse(readFileSync(DEMO_SEED_PATH, 'utf8')) as Seed;
  const oas: SeedOa[] = demo.oas.map((oa) => ({ ...oa, rsa: null }));
  for (let index = 1; index <= 7; index += 1) oas.push(syncOa(index));
  oas.push(syncOa(PAGING_OA, manyTemplates));
  return { ...demo, oas };
}

const seed = simulatorSeed();
const oaOf = (index: number): SeedOa => seed.oas.find((oa) => oa.oa_id === syncOa(index).oa_id)!;
const idsOf = (index: number): [string, string] => {
  const [first, second] = oaOf(index).templates!;
  return [first!.template_id, second!.template_id];
};

describe.each(STORE_KINDS)('template sync on %s', (kind) => {
  let sim: RunningSimulator;
  let gateway: TestGateway;

  beforeAll(async () => {
    sim = await startSimulator({ seed, eventsUrl: null });
    gateway = await startTestGateway(kind, { env: { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, ZNS_TIMEOUT_MS: '2000' } });
  });
  afterAll(async () => {
    await killAllTms();
    await gateway?.close();
    await sim?.close();
  });
  beforeEach(() => {
    sim.control.clearFaults();
  });

  /** The body of a 2xx answer. */
  async function ok(response: Promise<{ status: number; text: string; body: any }>) {
    const answer = await response;
    expect(answer.status, answer.text).toBeGreaterThanOrEqual(200);
    expect(answer.status, answer.text).toBeLessThan(300);
    return answer.body;
  }

  /** A fresh workspace with only this sender account connected, through the admin API. */
  async function workspaceWith(oa: SeedOa | typeof DEMO_SENDER_ACCOUNT): Promise<string> {
    const workspace = await ok(gateway.admin('POST', '/workspaces', { name: `sync ${oa.oa_id}` }));
    await ok(
      gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oa.oa_id}?verify=false`, {
        name: oa.name,
        daily_quota: 5000,
        app_id: oa.app_id,
        app_secret: oa.app_secret,
        refresh_token: oa.refresh_token,
      }),
    );
    return workspace.id;
  }

  /** The audit log's template syncs of a workspace, newest first. */
  const syncEntries = async (workspaceId: string): Promise<any[]> =>
    (await ok(gateway.admin('GET', `/audit?workspace_id=${workspaceId}&limit=500`))).entries.filter((entry: { action: string }) => entry.action === 'template.sync');

  const sync = async (workspaceId: string, body?: unknown): Promise<Static<typeof TemplateSyncResultSchema>> =>
    ok(gateway.admin('POST', `/workspaces/${workspaceId}/templates/sync`, body));

  async function templates(workspaceId: string): Promise<Record<string, any>> {
    const listed = await ok(gateway.admin('GET', `/workspaces/${workspaceId}/templates`));
    return Object.fromEntries(listed.templates.map((template: { template_id: string }) => [template.template_id, template]));
  }

  const rows = (workspaceId: string) =>
    gateway.runtime.store.db.selectFrom('templates').selectAll().where('workspace_id', '=', workspaceId).orderBy('template_id').execute();

  const platformParams = (template: SeedTemplate) =>
    template.params!.map((p) => ({ name: p.name, type: 'STRING', required: p.required ?? true, max_length: p.max_length, min_length: p.min_length ?? 0 }));

  it('creates the platform templates with params and platform prices in a fresh workspace', async () => {
    sim.control.updateTemplate('250001', { price: '800.0' });
    try {
      const workspaceId = await workspaceWith(DEMO_SENDER_ACCOUNT);
      expect(await templates(workspaceId)).toEqual({});

      const result = await sync(workspaceId);
      expect(result).toEqual({
        workspace_id: workspaceId,
        count: 1,
        accounts: [{ oa_id: DEMO_OA, created: 3, updated: 0, unchanged: 0, failed: [], error: null, skipped: false }],
      });

      const synced = await templates(workspaceId);
      expect(Object.keys(synced)).toEqual(['250001', '250002', '250003']);
      const platformPrices: Record<string, number> = { '250001': 800, '250002': 250, '250003': 300 };
      for (const template of DEMO_TEMPLATES) {
        expect(synced[template.template_id]).toEqual({
          template_id: template.template_id,
          name: template.name,
          status: 'ENABLE',
          // The platform's list and info carry no type: a template first seen through sync is type 1.
          template_type: 1,
          oa_id: DEMO_OA,
          oa_name: DEMO_SENDER_ACCOUNT.name,
          preview_url: template.preview_url,
          price: platformPrices[template.template_id],
          params: template.params,
        });
      }
      for (const row of await rows(workspaceId)) expect(row).toMatchObject({ price_source: 'platform', synced_at: expect.any(Number) });

      // Nothing changed on the platform: nothing changes here.
      expect((await sync(workspaceId)).accounts).toEqual([{ oa_id: DEMO_OA, created: 0, updated: 0, unchanged: 3, failed: [], error: null, skipped: false }]);

      // A platform-priced template follows the platform's price.
      sim.control.updateTemplate('250002', { price: '275.0' });
      try {
        expect((await sync(workspaceId)).accounts[0]).toMatchObject({ created: 0, updated: 1, unchanged: 2 });
        expect((await templates(workspaceId))['250002'].price).toBe(275);
      } finally {
        sim.control.updateTemplate('250002', { price: '250' });
      }

      // What integrators see.
      const key = await ok(gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: SCOPES_ALL }));
      const visible = await ok(gateway.request('GET', '/api/v1/templates', { key: key.key }));
      expect(visible.templates.map((template: { template_id: string; status: string }) => [template.template_id, template.status])).toEqual([
        ['250001', 'ENABLE'],
        ['250002', 'ENABLE'],
        ['250003', 'ENABLE'],
      ]);
    } finally {
      sim.control.updateTemplate('250001', { price: '300' });
    }
  });

  it('pages through more than one page of the platform list', async () => {
    const workspaceId = await workspaceWith(oaOf(PAGING_OA));
    const result = await sync(workspaceId);
    expect(result.accounts).toEqual([{ oa_id: oaOf(PAGING_OA).oa_id, created: MANY_TEMPLATES, updated: 0, unchanged: 0, failed: [], error: null, skipped: false }]);
    expect((await rows(workspaceId)).map((row) => row.template_id)).toEqual(manyTemplates.map((template) => template.template_id).sort());
  });

  it("keeps the operator's price and template type while name, status and params come from the platform", async () => {
    const oa = oaOf(1);
    const [registered, discovered] = idsOf(1);
    const platform = oa.templates!;
    const workspaceId = await workspaceWith(oa);
    // The operator registered one of them before any sync, with their own price and stale details.
    await ok(
      gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${registered}?verify=false`, {
        name: 'Our old name',
        status: 'PENDING_REVIEW',
        template_type: 4,
        oa_id: oa.oa_id,
        preview_url: 'https://example.com/old-preview',
        price: 1200,
        params: [{ name: 'customer_name', type: 'STRING', required: true, max_length: 10, min_length: 1 }],
      }),
    );

    const first = await sync(workspaceId);
    expect(first.accounts).toEqual([{ oa_id: oa.oa_id, created: 1, updated: 1, unchanged: 0, failed: [], error: null, skipped: false }]);
    let synced = await templates(workspaceId);
    expect(synced[registered]).toMatchObject({
      name: platform[0]!.name,
      status: 'ENABLE',
      template_type: 4,
      preview_url: platform[0]!.preview_url,
      price: 1200,
      params: platformParams(platform[0]!),
    });
    expect(synced[discovered]).toMatchObject({ name: platform[1]!.name, template_type: 1, price: 450, params: platformParams(platform[1]!) });
    expect((await rows(workspaceId)).map((row) => [row.template_id, row.price_source])).toEqual([
      [registered, 'operator'],
      [discovered, 'platform'],
    ]);

    // The operator prices the discovered template: from now on the platform's price changes are not ours.
    const { template_id: _id, oa_name: _name, ...current } = synced[discovered];
    await ok(gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${discovered}?verify=false`, { ...current, price: 999 }));
    sim.control.updateTemplate(discovered, { price: '900.0' });
    sim.control.updateTemplate(registered, { price: '1.0', name: 'Order shipped, renamed' });
    try {
      const second = await sync(workspaceId);
      expect(second.accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 1, unchanged: 1, failed: [], error: null, skipped: false }]);
      synced = await templates(workspaceId);
      expect(synced[discovered].price).toBe(999);
      expect(synced[registered]).toMatchObject({ name: 'Order shipped, renamed', price: 1200 });
      expect((await rows(workspaceId)).every((row) => row.price_source === 'operator')).toBe(true);
    } finally {
      sim.control.updateTemplate(discovered, { price: '450' });
    }
  });

  it('shows a status change on the platform after the next sync, in the public API and at send time', async () => {
    const oa = oaOf(2);
    const [shipped, payment] = idsOf(2);
    const workspaceId = await workspaceWith(oa);
    await ok(gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 100_000 }));
    const key = (await ok(gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: SCOPES_ALL }))).key as string;
    // A template the operator registered that the platform does not know.
    await ok(
      gateway.admin('PUT', `/workspaces/${workspaceId}/templates/269999?verify=false`, {
        name: 'Not on the platform',
        status: 'ENABLE',
        template_type: 1,
        oa_id: oa.oa_id,
        price: 100,
        params: [],
      }),
    );
    expect((await sync(workspaceId)).accounts[0]).toMatchObject({ created: 2, error: null });
    const send = () =>
      gateway.request('POST', '/api/v1/messages/send', { key, body: { template_id: payment, phone: '0912345678', template_data: { amount: '100000' } } });
    // The send is accepted and the template is now in the send path's cache.
    expect((await send()).status).toBe(202);

    sim.control.updateTemplate(payment, { status: 'DISABLE' });
    sim.control.updateTemplate(shipped, { status: 'DELETE' });
    try {
      const result = await sync(workspaceId);
      expect(result.accounts).toEqual([
        {
          oa_id: oa.oa_id,
          created: 0,
          updated: 2,
          unchanged: 0,
          failed: [{ template_id: '269999', error: expect.stringMatching(/does not list it .* answers -109 .*left as it is/) }],
          error: null,
          skipped: false,
        },
      ]);
      const listed = await ok(gateway.request('GET', '/api/v1/templates', { key }));
      expect(Object.fromEntries(listed.templates.map((template: { template_id: string; status: string }) => [template.template_id, template.status]))).toEqual({
        [shipped]: 'DELETE',
        [payment]: 'DISABLE',
        '269999': 'ENABLE',
      });
      const enabled = await ok(gateway.request('GET', '/api/v1/templates?status=ENABLE', { key }));
      expect(enabled.templates.map((template: { template_id: string }) => template.template_id)).toEqual(['269999']);
      // The change reached the send path at once (the catalog cache forgot the template).
      expectError(await send(), 'template_not_enabled', /DISABLE/);
      // The unknown template is left as it was.
      expect((await rows(workspaceId)).find((row) => row.template_id === '269999')).toMatchObject({ status: 'ENABLE', price: 100, synced_at: null });

      sim.control.updateTemplate(payment, { status: 'ENABLE' });
      expect((await sync(workspaceId)).accounts[0]).toMatchObject({ updated: 1, unchanged: 1 });
      expect((await send()).status).toBe(202);
    } finally {
      sim.control.updateTemplate(payment, { status: 'ENABLE' });
      sim.control.updateTemplate(shipped, { status: 'ENABLE' });
    }
  });

  it('the admin route syncs one account on request and refuses what it should', async () => {
    const oa = oaOf(3);
    const workspaceId = await workspaceWith(oa);
    expect((await sync(workspaceId, { oa_id: oa.oa_id })).accounts).toEqual([{ oa_id: oa.oa_id, created: 2, updated: 0, unchanged: 0, failed: [], error: null, skipped: false }]);
    // An empty JSON body is no body.
    const empty = await gateway.request('POST', `/admin/v1/workspaces/${workspaceId}/templates/sync`, {
      key: gateway.config.adminToken!,
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body.accounts[0]).toMatchObject({ unchanged: 2 });
    // Each sync the operator asked for is in the audit log, with what it did per account.
    const syncs = (await syncEntries(workspaceId)).map((entry) => [entry.actor, entry.target, entry.after]);
    const operator = { kind: 'operator', id: null, name: 'bootstrap token' };
    expect(syncs).toEqual([
      [operator, null, { accounts: [{ oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 2, failed: 0, error: null }] }],
      [operator, oa.oa_id, { accounts: [{ oa_id: oa.oa_id, created: 2, updated: 0, unchanged: 0, failed: 0, error: null }] }],
    ]);

    expectError(await gateway.admin('POST', '/workspaces/ws_missing/templates/sync'), 'workspace_not_found');
    expectError(await gateway.admin('POST', `/workspaces/${workspaceId}/templates/sync`, { oa_id: DEMO_OA }), 'sender_account_not_found');
    expectError(await gateway.admin('POST', `/workspaces/${workspaceId}/templates/sync`, { oa_id: 5 }), 'invalid_request');
    expectError(await gateway.admin('POST', `/workspaces/${workspaceId}/templates/sync`, { oa: oa.oa_id }), 'invalid_request');
    expectError(await gateway.request('POST', `/admin/v1/workspaces/${workspaceId}/templates/sync`), 'unauthenticated');
    const key = (await ok(gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: SCOPES_ALL }))).key as string;
    expectError(await gateway.request('POST', `/admin/v1/workspaces/${workspaceId}/templates/sync`, { key }), 'unauthenticated');
  });

  it(
    'tms admin templates sync works as a subprocess on the same store',
    async () => {
      const oa = oaOf(4);
      const [first] = idsOf(4);
      const workspaceId = await workspaceWith(oa);
      const env: Record<string, string> = {
        ...gateway.database.env,
        TMS_MASTER_KEY: gateway.config.masterKey!.toString('hex'),
        TMS_ADMIN_TOKEN: gateway.config.adminToken!,
        ZNS_OAUTH_URL: sim.url,
        ZNS_API_URL: sim.url,
        TMS_LOG_LEVEL: 'silent',
        TMS_DEMO_SEED: 'false',
      };

      const json = await runAdminJson(['templates', 'sync', workspaceId], env);
      expect(json).toEqual({ workspace_id: workspaceId, count: 1, accounts: [{ oa_id: oa.oa_id, created: 2, updated: 0, unchanged: 0, failed: [], error: null, skipped: false }] });
      expect(Object.keys(await templates(workspaceId))).toEqual(idsOf(4));

      sim.control.updateTemplate(first, { status: 'REJECT' });
      try {
        const human = await runTms(['admin', 'templates', 'sync', workspaceId, '--oa-id', oa.oa_id], env);
        expect(human.code, human.stderr).toBe(0);
        expect(human.stdout).toContain(`workspace_id: ${workspaceId}`);
        expect(human.stdout).toMatch(/oa_id\s+created\s+updated\s+unchanged\s+error/);
        expect(human.stdout).toMatch(new RegExp(`${oa.oa_id}\\s+0\\s+1\\s+1\\s+-`));
        expect((await templates(workspaceId))[first].status).toBe('REJECT');
      } finally {
        sim.control.updateTemplate(first, { status: 'ENABLE' });
      }

      const unknown = await runTms(['admin', 'templates', 'sync', 'ws_missing', '--json'], env);
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toContain('workspace ws_missing not found');
      const noWorkspace = await runTms(['admin', 'templates', 'sync'], env);
      expect(noWorkspace.code).toBe(1);
      expect(noWorkspace.stderr).toContain('workspace id is required');
    },
    PROCESS_TIMEOUT_MS,
  );

  it('an unavailable platform gives the account an error and changes nothing', async () => {
    const oa = oaOf(5);
    const [first, second] = idsOf(5);
    const workspaceId = await workspaceWith(oa);
    expect((await sync(workspaceId)).accounts[0]).toMatchObject({ created: 2, error: null });
    const before = await rows(workspaceId);
    sim.control.updateTemplate(first, { status: 'DISABLE', name: 'Changed during the outage' });
    try {
      const outages: Partial<Faults>[] = [
        { error_rate_5xx: 1, scope: 'business' },
        // HTTP 200 with -100 "Unknown error, try again later".
        { unknown_error_rate: 1, scope: 'business' },
        // No answer within ZNS_TIMEOUT_MS.
        { timeout_rate: 1, timeout_ms: 2500, scope: 'business' },
      ];
      for (const faults of outages) {
        sim.control.setFaults(faults);
        const result = await sync(workspaceId);
        sim.control.clearFaults();
        expect(result.accounts, JSON.stringify(faults)).toEqual([
          { oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: expect.stringContaining('unavailable'), skipped: false },
        ]);
        expect(await rows(workspaceId)).toEqual(before);
      }

      // The OAuth host is down too while the access token needs a refresh.
      await gateway.runtime.store.db.updateTable('sender_accounts').set({ access_token_expires_at: 0 }).where('oa_id', '=', oa.oa_id).execute();
      sim.control.setFaults({ error_rate_5xx: 1, scope: 'all' });
      // A token cache of its own, so the sync starts from the expired token in the row and must refresh.
      const parts = { ...gateway.runtime, accessTokens: new AccessTokens(gateway.runtime) };
      const down = await syncTemplates({ ctx: createContext(parts, { kind: 'operator' }), input: { workspaceId } });
      sim.control.clearFaults();
      expect(down).toEqual([{ oaId: oa.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: expect.stringContaining('unavailable'), skipped: false }]);
      expect(await rows(workspaceId)).toEqual(before);
      expect((await gateway.admin('GET', `/workspaces/${workspaceId}/sender-accounts`)).body.sender_accounts[0]).toMatchObject({ status: 'connected', token_problem: null });

      // After the outage the change arrives.
      expect((await sync(workspaceId)).accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 1, unchanged: 1, failed: [], error: null, skipped: false }]);
      expect((await templates(workspaceId))[first]).toMatchObject({ status: 'DISABLE', name: 'Changed during the outage' });
      expect((await templates(workspaceId))[second]).toMatchObject({ status: 'ENABLE' });
    } finally {
      sim.control.clearFaults();
      sim.control.updateTemplate(first, { status: 'ENABLE', name: oa.templates![0]!.name });
    }
  });

  it('a refused access token is refreshed once; a refused refresh token turns into the account error', async () => {
    const oa = oaOf(6);
    const workspaceId = await workspaceWith(oa);
    expect((await sync(workspaceId)).accounts[0]).toMatchObject({ created: 2, error: null });

    // The platform forgets the access token the gateway holds: sync refreshes and goes on.
    sim.control.expireAccessTokens(oa.oa_id);
    expect((await sync(workspaceId)).accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 2, failed: [], error: null, skipped: false }]);

    // Now the refresh token is refused too: the operator must connect the account again.
    const before = await rows(workspaceId);
    sim.control.expireAccessTokens(oa.oa_id);
    sim.control.revokeRefreshToken(oa.oa_id);
    const refused = await sync(workspaceId, { oa_id: oa.oa_id });
    expect(refused.accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: expect.stringContaining('must be connected again'), skipped: false }]);
    expect(await rows(workspaceId)).toEqual(before);
    // A sync skips an account that is not connected, and says why: of the whole workspace or of the account alone.
    const skipped = { oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: expect.stringMatching(/^skipped: it needs a new refresh token \(.*connect the sender account again/), skipped: true };
    expect((await sync(workspaceId)).accounts).toEqual([skipped]);
    expect((await sync(workspaceId, { oa_id: oa.oa_id })).accounts).toEqual([skipped]);
  });

  it('a sync of the workspace skips a disconnected account without asking the platform, and syncs it again once reconnected', async () => {
    const oa = oaOf(7);
    const [first] = idsOf(7);
    const workspaceId = await workspaceWith(oa);
    expect((await sync(workspaceId)).accounts[0]).toMatchObject({ created: 2, error: null });
    await ok(gateway.admin('POST', `/workspaces/${workspaceId}/sender-accounts/${oa.oa_id}/disconnect`));
    const before = await rows(workspaceId);
    sim.control.updateTemplate(first, { status: 'DISABLE' });
    try {
      const requestsBefore = sim.control.stats().requests.total;
      expect((await sync(workspaceId)).accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: 'skipped: it is disconnected', skipped: true }]);
      expect(sim.control.stats().requests.total).toBe(requestsBefore);
      expect(await rows(workspaceId)).toEqual(before);
      // Asked for by id too, though this process still holds a valid access token of the account.
      expect((await sync(workspaceId, { oa_id: oa.oa_id })).accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 0, unchanged: 0, failed: [], error: 'skipped: it is disconnected', skipped: true }]);
      expect(sim.control.stats().requests.total).toBe(requestsBefore);
      expect(await rows(workspaceId)).toEqual(before);

      expect((await ok(gateway.admin('POST', `/workspaces/${workspaceId}/sender-accounts/${oa.oa_id}/reconnect`))).status).toBe('connected');
      expect((await sync(workspaceId)).accounts).toEqual([{ oa_id: oa.oa_id, created: 0, updated: 1, unchanged: 1, failed: [], error: null, skipped: false }]);
      expect((await templates(workspaceId))[first].status).toBe('DISABLE');
    } finally {
      sim.control.updateTemplate(first, { status: 'ENABLE' });
    }
  });

  it('the periodic task syncs every workspace with a connected sender account', async () => {
    const { runtime } = gateway;
    // Earlier tests changed the simulator back; every connected account of every workspace is visited.
    const task = templateSyncTask(runtime, 60_000);
    expect(task).toMatchObject({ name: 'template_sync', intervalMs: 60_000 });
    const demoWorkspace = (await runtime.store.db.selectFrom('sender_accounts').select('workspace_id').where('oa_id', '=', DEMO_OA).executeTakeFirstOrThrow()).workspace_id;
    await runtime.store.db.updateTable('templates').set({ name: 'stale' }).where('template_id', '=', '250003').execute();
    const auditedBefore = (await syncEntries(demoWorkspace)).length;
    // Each platform call of the round is reported as progress (the worker's stall check counts on it).
    let steps = 0;
    await task.run(() => (steps += 1), new AbortController().signal);
    expect((await templates(demoWorkspace))['250003'].name).toBe('Appointment reminder');
    // At least the list and the info of each of the demo account's three templates.
    expect(steps).toBeGreaterThanOrEqual(4);
    // The schedule's own work is no operator change: it is not audited.
    expect((await syncEntries(demoWorkspace)).length).toBe(auditedBefore);
    // Same answer through the service directly: everything is now up to date.
    const again = await syncTemplates({ ctx: runtime.contextFor({ kind: 'operator' }), input: { workspaceId: demoWorkspace } });
    expect(again).toEqual([{ oaId: DEMO_OA, created: 0, updated: 0, unchanged: 3, failed: [], error: null, skipped: false }]);
    // The worker stops after the round's first platform call (the list): no other call is made, the
    // account's sync writes nothing, and the next run does it.
    await runtime.store.db.updateTable('templates').set({ name: 'stale' }).where('template_id', '=', '250003').execute();
    const stopping = new AbortController();
    let stepsBeforeStop = 0;
    await task.run(() => {
      stepsBeforeStop += 1;
      stopping.abort();
    }, stopping.signal);
    expect(stepsBeforeStop).toBe(1);
    expect((await templates(demoWorkspace))['250003'].name).toBe('stale');
    await task.run(() => undefined, new AbortController().signal);
    expect((await templates(demoWorkspace))['250003'].name).toBe('Appointment reminder');
  });
});

describe('template sync on the worker schedule', () => {
  let sim: RunningSimulator;
  let gateway: TestGateway;

  beforeAll(async () => {
    sim = await startSimulator({ seed, eventsUrl: null });
    gateway = await startTestGateway(STORE_KINDS[0]!, { worker: true, env: { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, TMS_TEMPLATE_SYNC_MS: '100' } });
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  it('a worker with TMS_TEMPLATE_SYNC_MS set picks up a newly connected account', async () => {
    expect(gateway.config.templateSyncMs).toBe(100);
    const workspace = (await gateway.admin('POST', '/workspaces', { name: 'scheduled sync' })).body;
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    const deadline = Date.now() + 30_000;
    let ids: string[] = [];
    while (Date.now() < deadline) {
      ids = (await gateway.admin('GET', `/workspaces/${workspace.id}/templates`)).body.templates.map((template: { template_id: string }) => template.template_id);
      if (ids.length === 3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ids).toEqual(['250001', '250002', '250003']);
  });
});
