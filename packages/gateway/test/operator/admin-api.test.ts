/**
 * The operator API under /admin/v1: every endpoint's happy path, its errors, and what it stores.
 * Runs on SQLite always and on PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret, sha256Hex } from '../../src/lib/crypto.ts';
import type { Database } from '../../src/store/schema.ts';
import { STORE_KINDS, VALID_DATA, httpRequest, seedWorkspace, startTestGateway, type TestGateway } from '../harness.ts';
import { expectError } from '../api/helpers.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

const unique = () => randomBytes(4).toString('hex');

function templateBody(oaId: string, overrides: Record<string, unknown> = {}) {
  return {
    name: 'Order shipped',
    status: 'ENABLE',
    template_type: 1,
    oa_id: oaId,
    preview_url: 'https://example.com/preview/shipped',
    price: 300,
    params: [
      { name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
      { name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 },
    ],
    ...overrides,
  };
}

function senderAccountBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Shop OA',
    default_mode: 'hashphone',
    daily_quota: 2500,
    app_id: 'app-4242',
    app_secret: `app-secret-${unique()}`,
    refresh_token: `refresh-token-${unique()}`,
    oa_secret_key: `oa-secret-key-${unique()}`,
    rsa_public_key: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----',
    ...overrides,
  };
}

/** An /admin/v1 operation as the operator reference documents it, ready to call. */
interface OperatorRoute {
  /** Method and path as documented: `GET /admin/v1/workspaces/{id}`. */
  name: string;
  method: string;
  /** The path with its documented example values. */
  path: string;
  /** The first documented request example, if the operation takes a body. */
  body?: unknown;
}

interface DocumentedOperation {
  parameters?: { name?: string; in?: string; example?: unknown }[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}

/**
 * Every /admin/v1 operation the app registered, from its own operator reference (generated from
 * the registered routes), so a route added later is checked without anyone listing it here. The
 * reference itself (/admin/v1/openapi.json) is not among them: docs-and-health.test.ts checks its guard.
 */
async function registeredOperatorRoutes(gateway: TestGateway): Promise<OperatorRoute[]> {
  const document = (await gateway.admin('GET', '/openapi.json')).body as { paths: Record<string, Record<string, DocumentedOperation>> };
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/admin/v1/'))
    .flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => {
        const example = (name: string) => operation.parameters?.find((parameter) => parameter.in === 'path' && parameter.name === name)?.example;
        const examples = Object.values(operation.requestBody?.content['application/json']?.examples ?? {});
        return {
          name: `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase(),
          path: path.replace(/\{(\w+)\}/g, (_whole, name: string) => encodeURIComponent(String(example(name) ?? `x_${name}`))),
          body: examples[0]?.value,
        };
      }),
    );
}

/** Every row of every table, and the names in the data directory: what a refused request must leave as it was. */
async function storeAndDataDirectory(gateway: TestGateway): Promise<Record<string, unknown>> {
  const { db } = gateway.runtime.store;
  const snapshot: Record<string, unknown> = { dataDirectory: readdirSync(gateway.config.dataDir).sort() };
  for (const { name } of await db.introspection.getTables()) {
    const rows = await db.selectFrom(name as keyof Database).selectAll().execute();
    snapshot[name] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return snapshot;
}

describe.each(STORE_KINDS)('operator API /admin/v1 (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { env: { TMS_WEBHOOK_ALLOW_PRIVATE: 'false' } });
  });
  afterAll(async () => gateway?.close());

  const createWorkspace = async (body: Record<string, unknown> = {}) => {
    const response = await gateway.admin('POST', '/workspaces', { name: `ws ${unique()}`, ...body });
    expect(response.status, response.text).toBe(201);
    return response.body;
  };

  describe('operator token', () => {
    /** Every /admin/v1 operation, read from the app's own operator reference, with a documented body and path. */
    let routes: OperatorRoute[];

    beforeAll(async () => {
      routes = await registeredOperatorRoutes(gateway);
    });

    it('lists the routes from the app itself, the newest ones included', () => {
      const names = routes.map((route) => route.name);
      expect(new Set(names).size).toBe(names.length);
      expect(names).toEqual(
        expect.arrayContaining([
          'POST /admin/v1/workspaces',
          'GET /admin/v1/workspaces/{id}/wallet',
          'POST /admin/v1/workspaces/{id}/personal-data/purge',
          'GET /admin/v1/audit',
          'POST /admin/v1/operator-tokens/{id}/revoke',
          'GET /admin/v1/backup',
          'POST /admin/v1/master-key/rotation',
        ]),
      );
    });

    it('refuses every route without a token and with a wrong one (401 in the error shape), and changes nothing', async () => {
      const before = await storeAndDataDirectory(gateway);
      const wrong: string[] = [];
      for (const route of routes) {
        for (const [who, key] of [['no token', undefined], ['a wrong token', `${gateway.config.adminToken!}x`]] as const) {
          const response = await httpRequest(gateway.url, route.method, route.path, { body: route.body, key });
          const refused = response.status === 401 && response.body?.error?.type === 'unauthenticated' && response.body.error.code === 401;
          if (!refused) wrong.push(`${route.name} with ${who}: ${response.status} ${response.text.slice(0, 200)}`);
        }
      }
      expect(wrong).toEqual([]);
      expect(await storeAndDataDirectory(gateway)).toEqual(before);
    });

    it('checks the token before the body: unparsable JSON is 401 without the token', async () => {
      const garbled = { rawBody: '{"name":', headers: { 'content-type': 'application/json' } };
      const wrong: string[] = [];
      for (const route of routes.filter(({ method }) => method !== 'GET')) {
        const answers = [
          ['the token', 'invalid_json', await httpRequest(gateway.url, route.method, route.path, { ...garbled, key: gateway.config.adminToken! })],
          ['no token', 'unauthenticated', await httpRequest(gateway.url, route.method, route.path, garbled)],
          ['a wrong token', 'unauthenticated', await httpRequest(gateway.url, route.method, route.path, { ...garbled, key: `${gateway.config.adminToken!}x` })],
        ] as const;
        for (const [who, type, response] of answers) if (response.body?.error?.type !== type) wrong.push(`${route.name} with ${who}: ${response.status} ${response.text.slice(0, 200)}`);
      }
      expect(wrong).toEqual([]);
    });

    it('checks the token before the query: an invalid query is 401 without the token', async () => {
      expectError(await gateway.admin('GET', '/workspaces?limit=0'), 'invalid_request');
      expectError(await httpRequest(gateway.url, 'GET', '/admin/v1/workspaces?limit=0'), 'unauthenticated');
      expectError(await httpRequest(gateway.url, 'GET', '/admin/v1/workspaces/ws_x/wallet?limit=many', { key: 'wrong-operator-token-0000' }), 'unauthenticated');
    });

    it('refuses the token in another scheme, in X-API-Key, or an API key in its place, and changes nothing', async () => {
      const token = gateway.config.adminToken!;
      const before = (await gateway.admin('GET', '/workspaces?limit=500')).body.count;
      expectError(await httpRequest(gateway.url, 'POST', '/admin/v1/workspaces', { body: { name: 'basic' }, headers: { authorization: `Basic ${token}` } }), 'unauthenticated');
      expectError(await httpRequest(gateway.url, 'POST', '/admin/v1/workspaces', { body: { name: 'x-api-key' }, key: token, keyHeader: 'x-api-key' }), 'unauthenticated');
      const seeded = await seedWorkspace(gateway);
      expectError(await httpRequest(gateway.url, 'GET', '/admin/v1/workspaces', { key: seeded.apiKey }), 'unauthenticated');
      expectError(await httpRequest(gateway.url, 'POST', '/admin/v1/workspaces', { body: { name: 'empty' }, headers: { authorization: 'Bearer ' } }), 'unauthenticated');
      const after = (await gateway.admin('GET', '/workspaces?limit=500')).body.count;
      expect(after).toBe(before + 1);
    });
  });

  describe('workspaces', () => {
    it('creates a workspace and reads it back', async () => {
      const created = await gateway.admin('POST', '/workspaces', { name: 'Cửa hàng Hoa Mai', message_cap: 1000 });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^ws_/),
        name: 'Cửa hàng Hoa Mai',
        status: 'active',
        balance: 0,
        message_cap: 1000,
        messages_used: 0,
        is_demo: false,
        created_at: expect.stringMatching(ISO_UTC),
      });
      const read = await gateway.admin('GET', `/workspaces/${created.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });

    it('creates without a cap (null)', async () => {
      expect((await createWorkspace()).message_cap).toBeNull();
    });

    it('lists workspaces newest first and pages', async () => {
      const first = await createWorkspace();
      const second = await createWorkspace();
      const list = await gateway.admin('GET', '/workspaces');
      expect(list.status).toBe(200);
      expect(list.body.count).toBe(list.body.workspaces.length);
      const ids = list.body.workspaces.map((workspace: { id: string }) => workspace.id);
      expect(ids.indexOf(second.id)).toBeGreaterThanOrEqual(0);
      expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
      const page = await gateway.admin('GET', '/workspaces?limit=1');
      expect(page.body).toEqual({ workspaces: [second], count: 1 });
      const next = await gateway.admin('GET', '/workspaces?limit=1&offset=1');
      expect(next.body.workspaces[0].id).toBe(first.id);
    });

    it.each([
      ['no name', {}],
      ['an empty name', { name: '' }],
      ['a negative cap', { name: 'x', message_cap: -1 }],
      ['a cap as text', { name: 'x', message_cap: '10' }],
      ['an unknown field', { name: 'x', balance: 100 }],
    ])('refuses %s with 400', async (_what, body) => {
      expectError(await gateway.admin('POST', '/workspaces', body), 'invalid_request');
    });

    it.each(['limit=0', 'limit=501', 'limit=abc', 'offset=-1'])('refuses list paging %s with 400', async (query) => {
      expectError(await gateway.admin('GET', `/workspaces?${query}`), 'invalid_request');
    });

    it('answers 404 for an unknown workspace on every workspace endpoint', async () => {
      const id = 'ws_does_not_exist';
      expectError(await gateway.admin('GET', `/workspaces/${id}`), 'workspace_not_found');
      expectError(await gateway.admin('POST', `/workspaces/${id}/suspend`), 'workspace_not_found');
      expectError(await gateway.admin('POST', `/workspaces/${id}/resume`), 'workspace_not_found');
      expectError(await gateway.admin('PUT', `/workspaces/${id}/message-cap`, { message_cap: 3 }), 'workspace_not_found');
      expectError(await gateway.admin('POST', `/workspaces/${id}/wallet/top-ups`, { amount: 100 }), 'workspace_not_found');
      expectError(await gateway.admin('GET', `/workspaces/${id}/wallet`), 'workspace_not_found');
      expectError(await gateway.admin('POST', `/workspaces/${id}/api-keys`, { scopes: ['messages:send'] }), 'workspace_not_found');
      expectError(await gateway.admin('GET', `/workspaces/${id}/api-keys`), 'workspace_not_found');
      expectError(await gateway.admin('PUT', `/workspaces/${id}/sender-accounts/oa${unique()}?verify=false`, senderAccountBody()), 'workspace_not_found');
      expectError(await gateway.admin('GET', `/workspaces/${id}/sender-accounts`), 'workspace_not_found');
      expectError(await gateway.admin('PUT', `/workspaces/${id}/templates/t${unique()}?verify=false`, templateBody('oa1')), 'workspace_not_found');
      expectError(await gateway.admin('GET', `/workspaces/${id}/templates`), 'workspace_not_found');
    });

    it("suspends and resumes: the workspace's keys get 403 while suspended and work again after", async () => {
      const seeded = await seedWorkspace(gateway);
      const templates = () => gateway.request('GET', '/api/v1/templates', { key: seeded.apiKey });
      expect((await templates()).status).toBe(200);

      const suspended = await gateway.admin('POST', `/workspaces/${seeded.workspaceId}/suspend`);
      expect(suspended.status).toBe(200);
      expect(suspended.body).toMatchObject({ id: seeded.workspaceId, status: 'suspended' });
      expect((await gateway.admin('GET', `/workspaces/${seeded.workspaceId}`)).body.status).toBe('suspended');
      expectError(await templates(), 'workspace_suspended');
      const send = await gateway.request('POST', '/api/v1/messages/send', {
        key: seeded.apiKey,
        body: { template_id: seeded.templateId, phone: '0912345678', template_data: VALID_DATA },
      });
      expectError(send, 'workspace_suspended');

      const resumed = await gateway.admin('POST', `/workspaces/${seeded.workspaceId}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body.status).toBe('active');
      expect((await templates()).status).toBe(200);
    });

    it('sets the message cap, enforces it on sends, and removes it with null', async () => {
      const seeded = await seedWorkspace(gateway);
      const send = () =>
        gateway.request('POST', '/api/v1/messages/send', {
          key: seeded.apiKey,
          body: { template_id: seeded.templateId, phone: '0912345678', template_data: VALID_DATA },
        });
      const capped = await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/message-cap`, { message_cap: 1 });
      expect(capped.status).toBe(200);
      expect(capped.body).toMatchObject({ id: seeded.workspaceId, message_cap: 1, messages_used: 0 });
      expect((await send()).status).toBe(202);
      expectError(await send(), 'account_cap_reached');
      expect((await gateway.admin('GET', `/workspaces/${seeded.workspaceId}`)).body).toMatchObject({ message_cap: 1, messages_used: 1 });

      const removed = await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/message-cap`, { message_cap: null });
      expect(removed.status).toBe(200);
      expect(removed.body.message_cap).toBeNull();
      expect((await gateway.admin('GET', `/workspaces/${seeded.workspaceId}`)).body.message_cap).toBeNull();
      expect((await send()).status).toBe(202);
    });

    it.each([
      ['no body field', {}],
      ['a negative cap', { message_cap: -5 }],
      ['a fractional cap', { message_cap: 1.5 }],
      ['a cap as text', { message_cap: 'none' }],
    ])('refuses a message cap with %s (400) and keeps the old one', async (_what, body) => {
      const workspace = await createWorkspace({ message_cap: 7 });
      expectError(await gateway.admin('PUT', `/workspaces/${workspace.id}/message-cap`, body), 'invalid_request');
      expect((await gateway.admin('GET', `/workspaces/${workspace.id}`)).body.message_cap).toBe(7);
    });
  });

  describe('wallet', () => {
    it('tops up, writes ledger entries and reads them newest first', async () => {
      const workspace = await createWorkspace();
      const first = await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 50_000, note: 'bank transfer 0001' });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        balance: 50_000,
        entry: {
          id: expect.stringMatching(/^led_/),
          kind: 'top_up',
          amount: 50_000,
          balance_after: 50_000,
          message_count: 0,
          reference: null,
          note: 'bank transfer 0001',
          created_at: expect.stringMatching(ISO_UTC),
        },
      });
      const second = await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 25_000 });
      expect(second.status).toBe(201);
      expect(second.body.balance).toBe(75_000);
      expect(second.body.entry).toMatchObject({ kind: 'top_up', amount: 25_000, balance_after: 75_000, note: null });

      const wallet = await gateway.admin('GET', `/workspaces/${workspace.id}/wallet`);
      expect(wallet.status).toBe(200);
      expect(wallet.body).toEqual({ workspace_id: workspace.id, balance: 75_000, ledger: [second.body.entry, first.body.entry], count: 2 });
      expect((await gateway.admin('GET', `/workspaces/${workspace.id}`)).body.balance).toBe(75_000);

      const page = await gateway.admin('GET', `/workspaces/${workspace.id}/wallet?limit=1&offset=1`);
      expect(page.body).toMatchObject({ balance: 75_000, ledger: [first.body.entry], count: 1 });
    });

    it('shows a charge in the ledger after a send', async () => {
      const seeded = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
      const sent = await gateway.request('POST', '/api/v1/messages/send', {
        key: seeded.apiKey,
        body: { template_id: seeded.templateId, phone: '0912345678', template_data: VALID_DATA },
      });
      expect(sent.status).toBe(202);
      const wallet = await gateway.admin('GET', `/workspaces/${seeded.workspaceId}/wallet`);
      expect(wallet.body.balance).toBe(9_700);
      expect(wallet.body.ledger[0]).toMatchObject({ kind: 'charge', amount: -300, balance_after: 9_700, message_count: 1, reference: sent.body.msg_id });
      expect(wallet.body.ledger[1]).toMatchObject({ kind: 'top_up', amount: 10_000, balance_after: 10_000 });
    });

    it.each([
      ['a negative amount', { amount: -5000 }],
      ['zero', { amount: 0 }],
      ['a fraction', { amount: 10.5 }],
      ['an amount as text', { amount: '5000' }],
      ['no amount', { note: 'x' }],
      ['an unknown field', { amount: 100, currency: 'USD' }],
    ])('refuses a top-up of %s (400) and leaves balance and ledger alone', async (_what, body) => {
      const workspace = await createWorkspace();
      await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 1000 });
      expectError(await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, body), 'invalid_request');
      const wallet = await gateway.admin('GET', `/workspaces/${workspace.id}/wallet`);
      expect(wallet.body).toMatchObject({ balance: 1000, count: 1 });
    });

    it('credits and debits with a reason, each a ledger entry and an audit entry, never below zero', async () => {
      const workspace = await createWorkspace();
      await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 10_000 });
      const debit = await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/adjustments`, { amount: -4_000, reason: 'top-up of 24/11 entered twice' });
      expect(debit.status, debit.text).toBe(201);
      expect(debit.body).toEqual({
        balance: 6_000,
        entry: {
          id: expect.stringMatching(/^led_/),
          kind: 'adjustment',
          amount: -4_000,
          balance_after: 6_000,
          message_count: 0,
          reference: null,
          note: 'top-up of 24/11 entered twice',
          created_at: expect.stringMatching(ISO_UTC),
        },
      });
      const credit = await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/adjustments`, { amount: 500, reason: 'goodwill for the outage' });
      expect(credit.body).toMatchObject({ balance: 6_500, entry: { kind: 'adjustment', amount: 500, balance_after: 6_500 } });

      // More than the balance: refused whole, nothing changes.
      const tooMuch = await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/adjustments`, { amount: -6_501, reason: 'x' });
      expectError(tooMuch, 'invalid_request');
      expect(tooMuch.body.error.message).toContain('would take the balance below zero: it holds 6500 VND');
      const emptied = await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/adjustments`, { amount: -6_500, reason: 'account closed' });
      expect(emptied.body.balance).toBe(0);

      const wallet = await gateway.admin('GET', `/workspaces/${workspace.id}/wallet`);
      expect(wallet.body.ledger.map((entry: { kind: string; amount: number }) => [entry.kind, entry.amount])).toEqual([
        ['adjustment', -6_500],
        ['adjustment', 500],
        ['adjustment', -4_000],
        ['top_up', 10_000],
      ]);
      const activity = await gateway.admin('GET', `/workspaces/${workspace.id}/activity`);
      const adjustments = activity.body.entries.filter((entry: { action: string }) => entry.action === 'wallet.adjust');
      expect(adjustments[adjustments.length - 1]).toMatchObject({
        actor: { kind: 'operator' },
        target: debit.body.entry.id,
        before: { balance: 10_000 },
        after: { balance: 6_000, amount: -4_000, note: 'top-up of 24/11 entered twice' },
      });
    });

    it.each([
      ['no reason', { amount: -100 }],
      ['an empty reason', { amount: -100, reason: '' }],
      ['a blank reason', { amount: -100, reason: '   ' }],
      ['zero', { amount: 0, reason: 'x' }],
      ['a fraction', { amount: -10.5, reason: 'x' }],
      ['an unknown field', { amount: 100, reason: 'x', currency: 'USD' }],
    ])('refuses an adjustment with %s (400) and leaves balance and ledger alone', async (_what, body) => {
      const workspace = await createWorkspace();
      await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 1000 });
      expectError(await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/adjustments`, body), 'invalid_request');
      const wallet = await gateway.admin('GET', `/workspaces/${workspace.id}/wallet`);
      expect(wallet.body).toMatchObject({ balance: 1000, count: 1 });
    });

    it('keeps the balance at zero or above when debits race each other', async () => {
      const workspace = await createWorkspace();
      await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 1000 });
      const debits = await Promise.all(Array.from({ length: 8 }, () => gateway.admin('POST', `/workspaces/${workspace.id}/wallet/adjustments`, { amount: -300, reason: 'race' })));
      expect(debits.filter((response) => response.status === 201)).toHaveLength(3);
      const wallet = await gateway.admin('GET', `/workspaces/${workspace.id}/wallet`);
      expect(wallet.body.balance).toBe(100);
      expect(wallet.body.count).toBe(4);
    });

    it('refuses bad ledger paging with 400', async () => {
      const workspace = await createWorkspace();
      expectError(await gateway.admin('GET', `/workspaces/${workspace.id}/wallet?limit=0`), 'invalid_request');
      expectError(await gateway.admin('GET', `/workspaces/${workspace.id}/wallet?limit=many`), 'invalid_request');
    });
  });

  describe('API keys', () => {
    it('shows the key exactly once at creation, stores only its hash and ciphertext, and the key works', async () => {
      const workspace = await createWorkspace();
      await gateway.admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: 1000 });
      const created = await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, {
        name: 'backend',
        scopes: ['templates:read', 'messages:read'],
        webhook_url: 'https://hooks.example.com/tms',
        rate_limit_per_second: 20,
      });
      expect(created.status).toBe(201);
      const key: string = created.body.key;
      expect(key).toMatch(/^tms_live_[A-Za-z0-9_-]{40,}$/);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^key_/),
        workspace_id: workspace.id,
        name: 'backend',
        key_prefix: key.slice(0, 'tms_live_'.length + 6),
        scopes: ['templates:read', 'messages:read'],
        webhook_url: 'https://hooks.example.com/tms',
        rate_limit_per_second: 20,
        revoked_at: null,
        created_at: expect.stringMatching(ISO_UTC),
        key,
      });
      expect(occurrences(created.text, key)).toBe(1);

      const list = await gateway.admin('GET', `/workspaces/${workspace.id}/api-keys`);
      expect(list.status).toBe(200);
      expect(list.body.count).toBe(1);
      const { key: _key, ...withoutKey } = created.body;
      expect(list.body.api_keys).toEqual([withoutKey]);
      expect(list.body.api_keys[0]).not.toHaveProperty('key');
      expect(list.text).not.toContain(key);
      expect(list.text).not.toContain(sha256Hex(key));

      const row = await gateway.runtime.store.db.selectFrom('api_keys').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
      expect(row.key_hash).toBe(sha256Hex(key));
      expect(row.encrypted_key).not.toBe(key);
      expect(row.encrypted_key).not.toContain(key);
      expect(row.encrypted_key).not.toContain(key.slice('tms_live_'.length));
      expect(decryptSecret(row.encrypted_key, gateway.config.masterKey!)).toBe(key);
      expect(JSON.parse(row.scopes)).toEqual(['templates:read', 'messages:read']);

      expect((await gateway.request('GET', '/api/v1/templates', { key })).status).toBe(200);
      expectError(await gateway.request('GET', '/api/v1/templates', { key: `${key}x` }), 'unauthenticated');
    });

    it('gives each key its own secret and ciphertext, and grants only the scopes asked for', async () => {
      const workspace = await createWorkspace();
      const first = await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send', 'messages:send'] });
      const second = await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'] });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ name: 'default', scopes: ['messages:send'], webhook_url: null, rate_limit_per_second: null });
      expect(first.body.key).not.toBe(second.body.key);
      const rows = await gateway.runtime.store.db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspace.id).execute();
      expect(rows).toHaveLength(2);
      expect(rows[0]!.encrypted_key).not.toBe(rows[1]!.encrypted_key);
      expectError(await gateway.request('GET', '/api/v1/templates', { key: first.body.key }), 'forbidden_scope', /templates:read/);
    });

    it.each([
      ['an unknown scope', { scopes: ['messages:send', 'messages:delete'] }],
      ['no scopes', { scopes: [] }],
      ['a missing scopes field', { name: 'x' }],
      ['an ftp:// webhook URL', { scopes: ['messages:send'], webhook_url: 'ftp://hooks.example.com/tms' }],
      ['a webhook URL that is not a URL', { scopes: ['messages:send'], webhook_url: 'hooks dot example' }],
      ['a loopback webhook URL', { scopes: ['messages:send'], webhook_url: 'http://127.0.0.1/hook' }],
      ['a localhost webhook URL', { scopes: ['messages:send'], webhook_url: 'http://localhost/hook' }],
      ['a private-network webhook URL', { scopes: ['messages:send'], webhook_url: 'https://10.1.2.3/hook' }],
      ['a webhook URL with credentials', { scopes: ['messages:send'], webhook_url: 'https://user:pw@hooks.example.com/' }],
      ['a zero rate limit', { scopes: ['messages:send'], rate_limit_per_second: 0 }],
    ])('refuses a key with %s (400) and creates nothing', async (_what, body) => {
      const workspace = await createWorkspace();
      expectError(await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, body), 'invalid_request');
      expect((await gateway.admin('GET', `/workspaces/${workspace.id}/api-keys`)).body.count).toBe(0);
    });

    it('revokes a key: 401 on the public API at once, revoked_at in the list, revoking again keeps the time', async () => {
      const seeded = await seedWorkspace(gateway);
      expect((await gateway.request('GET', '/api/v1/templates', { key: seeded.apiKey })).status).toBe(200);
      const revoked = await gateway.admin('POST', `/api-keys/${seeded.apiKeyId}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ id: seeded.apiKeyId, workspace_id: seeded.workspaceId, revoked_at: expect.stringMatching(ISO_UTC) });
      expect(revoked.body).not.toHaveProperty('key');
      expectError(await gateway.request('GET', '/api/v1/templates', { key: seeded.apiKey }), 'unauthenticated');
      const list = await gateway.admin('GET', `/workspaces/${seeded.workspaceId}/api-keys`);
      expect(list.body.api_keys[0].revoked_at).toBe(revoked.body.revoked_at);
      const again = await gateway.admin('POST', `/api-keys/${seeded.apiKeyId}/revoke`);
      expect(again.status).toBe(200);
      expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
    });

    it("sets, changes and clears a key's webhook URL and rate limit", async () => {
      const workspace = await createWorkspace();
      const key = (await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'] })).body;
      const set = await gateway.admin('PATCH', `/api-keys/${key.id}`, { webhook_url: 'https://hooks.example.com/a' });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ id: key.id, webhook_url: 'https://hooks.example.com/a', rate_limit_per_second: null });
      expect(set.body).not.toHaveProperty('key');
      const limited = await gateway.admin('PATCH', `/api-keys/${key.id}`, { rate_limit_per_second: 5 });
      expect(limited.body).toMatchObject({ webhook_url: 'https://hooks.example.com/a', rate_limit_per_second: 5 });
      const cleared = await gateway.admin('PATCH', `/api-keys/${key.id}`, { webhook_url: null, rate_limit_per_second: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ webhook_url: null, rate_limit_per_second: null });
      expect((await gateway.admin('GET', `/workspaces/${workspace.id}/api-keys`)).body.api_keys[0]).toMatchObject({ webhook_url: null, rate_limit_per_second: null });
    });

    it('answers an empty change with the key unchanged', async () => {
      const workspace = await createWorkspace();
      const key = (await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'], webhook_url: 'https://hooks.example.com/keep' })).body;
      const response = await gateway.admin('PATCH', `/api-keys/${key.id}`, {});
      expect(response.status, response.text).toBe(200);
      expect(response.body).toMatchObject({ id: key.id, webhook_url: 'https://hooks.example.com/keep' });
    });

    it.each([
      ['ftp://hooks.example.com/tms'],
      ['http://127.0.0.1/hook'],
      ['http://localhost/hook'],
      ['http://[::1]/hook'],
      ['http://192.168.1.10/hook'],
    ])('refuses webhook URL %s on change (400) and keeps the old one', async (url) => {
      const workspace = await createWorkspace();
      const key = (await gateway.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'], webhook_url: 'https://hooks.example.com/old' })).body;
      expectError(await gateway.admin('PATCH', `/api-keys/${key.id}`, { webhook_url: url }), 'invalid_request');
      expect((await gateway.admin('GET', `/workspaces/${workspace.id}/api-keys`)).body.api_keys[0].webhook_url).toBe('https://hooks.example.com/old');
    });

    it('answers 404 for an unknown key', async () => {
      expectError(await gateway.admin('POST', '/api-keys/key_does_not_exist/revoke'), 'api_key_not_found');
      expectError(await gateway.admin('PATCH', '/api-keys/key_does_not_exist', { webhook_url: 'https://hooks.example.com/x' }), 'api_key_not_found');
    });

    it('accepts private webhook targets when TMS_WEBHOOK_ALLOW_PRIVATE is true', async () => {
      const permissive = await startTestGateway(kind, { env: { TMS_WEBHOOK_ALLOW_PRIVATE: 'true' } });
      try {
        const workspace = (await permissive.admin('POST', '/workspaces', { name: 'local' })).body;
        const created = await permissive.admin('POST', `/workspaces/${workspace.id}/api-keys`, { scopes: ['messages:send'], webhook_url: 'http://127.0.0.1/hook' });
        expect(created.status).toBe(201);
        const changed = await permissive.admin('PATCH', `/api-keys/${created.body.id}`, { webhook_url: 'http://localhost/hook' });
        expect(changed.body.webhook_url).toBe('http://localhost/hook');
        expectError(await permissive.admin('PATCH', `/api-keys/${created.body.id}`, { webhook_url: 'ftp://localhost/hook' }), 'invalid_request');
      } finally {
        await permissive.close();
      }
    });
  });

  describe('sender accounts', () => {
    it('connects an account, keeps its secrets encrypted and never returns them', async () => {
      const workspace = await createWorkspace();
      const oaId = `oa${unique()}`;
      const body = senderAccountBody();
      const connected = await gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, body);
      expect(connected.status).toBe(200);
      expect(connected.body).toEqual({
        oa_id: oaId,
        workspace_id: workspace.id,
        name: body.name,
        default_mode: 'hashphone',
        daily_quota: 2500,
        status: 'connected',
        token_problem: null,
        has_oa_secret_key: true,
        app_id: 'app-4242',
        rsa_public_key: body.rsa_public_key,
        created_at: expect.stringMatching(ISO_UTC),
      });
      for (const secret of [body.app_secret, body.refresh_token, body.oa_secret_key]) expect(connected.text).not.toContain(secret);

      const list = await gateway.admin('GET', `/workspaces/${workspace.id}/sender-accounts`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ sender_accounts: [connected.body], count: 1 });
      for (const secret of [body.app_secret, body.refresh_token, body.oa_secret_key]) expect(list.text).not.toContain(secret);

      const row = await gateway.runtime.store.db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirstOrThrow();
      expect(row.encrypted_app_secret).not.toBe(body.app_secret);
      expect(row.encrypted_app_secret).not.toContain(body.app_secret);
      expect(row.encrypted_refresh_token).not.toBe(body.refresh_token);
      expect(row.encrypted_refresh_token).not.toContain(body.refresh_token);
      expect(decryptSecret(row.encrypted_app_secret, gateway.config.masterKey!)).toBe(body.app_secret);
      expect(decryptSecret(row.encrypted_refresh_token, gateway.config.masterKey!)).toBe(body.refresh_token);
      expect(row.encrypted_oa_secret_key).not.toContain(body.oa_secret_key);
      expect(decryptSecret(row.encrypted_oa_secret_key!, gateway.config.masterKey!)).toBe(body.oa_secret_key);
    });

    it('defaults the mode to plain and updates the account when the same workspace connects it again', async () => {
      const workspace = await createWorkspace();
      const oaId = `oa${unique()}`;
      const { default_mode: _mode, rsa_public_key: _rsa, ...minimal } = senderAccountBody();
      const first = await gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, minimal);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ default_mode: 'plain', rsa_public_key: null });
      const renewed = senderAccountBody({ name: 'Shop OA (renamed)', daily_quota: 9000, refresh_token: 'refresh-token-renewed' });
      const second = await gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, renewed);
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ oa_id: oaId, name: 'Shop OA (renamed)', daily_quota: 9000, default_mode: 'hashphone', created_at: first.body.created_at });
      const list = await gateway.admin('GET', `/workspaces/${workspace.id}/sender-accounts`);
      expect(list.body.count).toBe(1);
      const row = await gateway.runtime.store.db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirstOrThrow();
      expect(decryptSecret(row.encrypted_refresh_token, gateway.config.masterKey!)).toBe('refresh-token-renewed');
    });

    it('refuses an oa_id already connected to another workspace (409) and leaves it with its owner', async () => {
      const owner = await createWorkspace();
      const other = await createWorkspace();
      const oaId = `oa${unique()}`;
      const original = senderAccountBody({ name: 'Owner OA' });
      expect((await gateway.admin('PUT', `/workspaces/${owner.id}/sender-accounts/${oaId}?verify=false`, original)).status).toBe(200);
      const stolen = await gateway.admin('PUT', `/workspaces/${other.id}/sender-accounts/${oaId}?verify=false`, senderAccountBody({ name: 'Thief OA' }));
      expectError(stolen, 'sender_account_taken');
      expect((await gateway.admin('GET', `/workspaces/${other.id}/sender-accounts`)).body.count).toBe(0);
      const ownerList = await gateway.admin('GET', `/workspaces/${owner.id}/sender-accounts`);
      expect(ownerList.body.sender_accounts).toEqual([expect.objectContaining({ oa_id: oaId, name: 'Owner OA', workspace_id: owner.id })]);
      const row = await gateway.runtime.store.db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oaId).executeTakeFirstOrThrow();
      expect(decryptSecret(row.encrypted_app_secret, gateway.config.masterKey!)).toBe(original.app_secret);
    });

    it('shows the account to the workspace on GET /api/v1/oas', async () => {
      const seeded = await seedWorkspace(gateway);
      const oaId = `oa${unique()}`;
      await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/sender-accounts/${oaId}?verify=false`, senderAccountBody({ name: 'Second OA' }));
      const oas = await gateway.request('GET', '/api/v1/oas', { key: seeded.apiKey });
      expect(oas.status).toBe(200);
      expect(oas.body.oas).toContainEqual({ oa_id: oaId, name: 'Second OA' });
      expect(oas.text).not.toContain('app-secret');
    });

    it.each([
      ['no app_secret', { app_secret: undefined }],
      ['an empty refresh_token', { refresh_token: '' }],
      ['a negative daily quota', { daily_quota: -1 }],
      ['an unknown default mode', { default_mode: 'rsa' }],
      ['an unknown field', { access_token: 'x' }],
    ])('refuses an account with %s (400)', async (_what, overrides) => {
      const workspace = await createWorkspace();
      const body = senderAccountBody(overrides);
      const response = await gateway.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/oa${unique()}?verify=false`, JSON.parse(JSON.stringify(body)));
      expectError(response, 'invalid_request');
      expect((await gateway.admin('GET', `/workspaces/${workspace.id}/sender-accounts`)).body.count).toBe(0);
    });
  });

  describe('templates', () => {
    it('registers a template, lists it for the operator and shows it on the public API', async () => {
      const seeded = await seedWorkspace(gateway);
      const templateId = `t${unique()}`;
      const registered = await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/templates/${templateId}?verify=false`, templateBody(seeded.oaId));
      expect(registered.status).toBe(200);
      const expected = {
        template_id: templateId,
        name: 'Order shipped',
        status: 'ENABLE',
        template_type: 1,
        oa_id: seeded.oaId,
        oa_name: expect.any(String),
        preview_url: 'https://example.com/preview/shipped',
        price: 300,
        params: templateBody(seeded.oaId).params,
      };
      expect(registered.body).toEqual({ ...expected, workspace_id: seeded.workspaceId });

      const operatorList = await gateway.admin('GET', `/workspaces/${seeded.workspaceId}/templates`);
      expect(operatorList.status).toBe(200);
      expect(operatorList.body.count).toBe(2);
      expect(operatorList.body.templates).toContainEqual(expected);

      const publicList = await gateway.request('GET', '/api/v1/templates', { key: seeded.apiKey });
      expect(publicList.status).toBe(200);
      expect(publicList.body.templates).toContainEqual(expected);
    });

    it('updates a template in place: status and price show on the public API at once and govern sends', async () => {
      const seeded = await seedWorkspace(gateway, { balance: 100_000 });
      const send = () =>
        gateway.request('POST', '/api/v1/messages/send', {
          key: seeded.apiKey,
          body: { template_id: seeded.templateId, phone: '0912345678', template_data: VALID_DATA },
        });
      const publicTemplate = async () =>
        (await gateway.request('GET', '/api/v1/templates', { key: seeded.apiKey })).body.templates.find(
          (template: { template_id: string }) => template.template_id === seeded.templateId,
        );
      expect(await publicTemplate()).toMatchObject({ status: 'ENABLE', price: 300 });
      // Warm whatever the send path caches, so the update below has to invalidate it.
      expect((await send()).status).toBe(202);

      const disabled = await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/templates/${seeded.templateId}?verify=false`, templateBody(seeded.oaId, { status: 'DISABLE', price: 450 }));
      expect(disabled.status).toBe(200);
      expect(disabled.body).toMatchObject({ template_id: seeded.templateId, status: 'DISABLE', price: 450 });
      expect(await publicTemplate()).toMatchObject({ status: 'DISABLE', price: 450 });
      expectError(await send(), 'template_not_enabled', /DISABLE/);

      await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/templates/${seeded.templateId}?verify=false`, templateBody(seeded.oaId, { status: 'ENABLE', price: 450 }));
      expect(await publicTemplate()).toMatchObject({ status: 'ENABLE', price: 450 });
      expect((await send()).status).toBe(202);
      const wallet = await gateway.admin('GET', `/workspaces/${seeded.workspaceId}/wallet`);
      expect(wallet.body.balance).toBe(100_000 - 300 - 450);
      expect(wallet.body.ledger[0]).toMatchObject({ kind: 'charge', amount: -450 });

      const templates = await gateway.admin('GET', `/workspaces/${seeded.workspaceId}/templates`);
      expect(templates.body.templates.filter((template: { template_id: string }) => template.template_id === seeded.templateId)).toHaveLength(1);
    });

    it("refuses a template on another workspace's sender account (404)", async () => {
      const mine = await seedWorkspace(gateway);
      const theirs = await seedWorkspace(gateway);
      const templateId = `t${unique()}`;
      expectError(await gateway.admin('PUT', `/workspaces/${mine.workspaceId}/templates/${templateId}?verify=false`, templateBody(theirs.oaId)), 'sender_account_not_found');
      expectError(await gateway.admin('PUT', `/workspaces/${mine.workspaceId}/templates/${templateId}?verify=false`, templateBody(`oa${unique()}`)), 'sender_account_not_found');
      const list = await gateway.admin('GET', `/workspaces/${mine.workspaceId}/templates`);
      expect(list.body.templates.map((template: { template_id: string }) => template.template_id)).not.toContain(templateId);
    });

    it("refuses a template id that belongs to another workspace (409) and leaves the owner's template alone", async () => {
      const owner = await seedWorkspace(gateway);
      const other = await seedWorkspace(gateway);
      const taken = await gateway.admin('PUT', `/workspaces/${other.workspaceId}/templates/${owner.templateId}?verify=false`, templateBody(other.oaId, { price: 1 }));
      expectError(taken, 'template_taken');
      const ownerView = await gateway.request('GET', '/api/v1/templates', { key: owner.apiKey });
      expect(ownerView.body.templates.find((template: { template_id: string }) => template.template_id === owner.templateId)).toMatchObject({ price: 300, oa_id: owner.oaId });
      const otherView = await gateway.request('GET', '/api/v1/templates', { key: other.apiKey });
      expect(otherView.body.templates.map((template: { template_id: string }) => template.template_id)).not.toContain(owner.templateId);
    });

    it.each([
      ['an unknown status', { status: 'ON' }],
      ['a negative price', { price: -1 }],
      ['a price as text', { price: '300' }],
      ['no params field', { params: undefined }],
      ['a param listed twice', { params: [{ name: 'a', type: 'STRING', required: true, max_length: 5, min_length: 1 }, { name: 'a', type: 'STRING', required: true, max_length: 5, min_length: 1 }] }],
      ['min_length above max_length', { params: [{ name: 'a', type: 'STRING', required: true, max_length: 2, min_length: 3 }] }],
    ])('refuses a template with %s (400)', async (_what, overrides) => {
      const seeded = await seedWorkspace(gateway);
      const templateId = `t${unique()}`;
      const response = await gateway.admin('PUT', `/workspaces/${seeded.workspaceId}/templates/${templateId}?verify=false`, JSON.parse(JSON.stringify(templateBody(seeded.oaId, overrides))));
      expectError(response, 'invalid_request');
      const list = await gateway.admin('GET', `/workspaces/${seeded.workspaceId}/templates`);
      expect(list.body.templates.map((template: { template_id: string }) => template.template_id)).not.toContain(templateId);
    });
  });
});
