/**
 * The shared security contract (DESIGN.md "Tests"): every /api/v1 route, with its scope, must
 * refuse missing, wrong and revoked keys (401), keys without the scope and suspended workspaces
 * (403), accept X-API-Key like Bearer, and never show another workspace's resources (404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES_ALL, STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { createKey, expectError, expectStatus, listAll, queueOne, rsaCiphertext, walletOf } from './helpers.ts';

type Scope = 'messages:send' | 'messages:read' | 'templates:read';

interface PreparedRequest {
  method: string;
  path: string;
  body?: unknown;
}

interface RouteCase {
  route: string;
  scope: Scope;
  /** Status of a successful call. */
  ok: number;
  /** Builds a request that succeeds for this workspace (creating what it needs). */
  prepare(gateway: TestGateway, workspace: SeededWorkspace): Promise<PreparedRequest>;
}

/** EVERY route of /api/v1 with the scope section 5 gives it. */
const ROUTES: RouteCase[] = [
  {
    route: 'POST /api/v1/messages/send',
    scope: 'messages:send',
    ok: 202,
    prepare: async (_gateway, ws) => ({
      method: 'POST',
      path: '/api/v1/messages/send',
      body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA },
    }),
  },
  {
    route: 'POST /api/v1/messages/batch',
    scope: 'messages:send',
    ok: 202,
    prepare: async (_gateway, ws) => ({
      method: 'POST',
      path: '/api/v1/messages/batch',
      body: { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }] },
    }),
  },
  {
    route: 'POST /api/v1/messages/rsa',
    scope: 'messages:send',
    ok: 202,
    prepare: async (_gateway, ws) => ({
      method: 'POST',
      path: '/api/v1/messages/rsa',
      body: { template_id: ws.templateId, recipients: [{ rsa_phone: rsaCiphertext(), template_data: VALID_DATA }] },
    }),
  },
  {
    route: 'GET /api/v1/messages/:id',
    scope: 'messages:read',
    ok: 200,
    prepare: async (gateway, ws) => ({ method: 'GET', path: `/api/v1/messages/${await queueOne(gateway, ws)}` }),
  },
  {
    route: 'GET /api/v1/messages',
    scope: 'messages:read',
    ok: 200,
    prepare: async () => ({ method: 'GET', path: '/api/v1/messages' }),
  },
  {
    route: 'POST /api/v1/messages/:id/cancel',
    scope: 'messages:send',
    ok: 200,
    prepare: async (gateway, ws) => ({ method: 'POST', path: `/api/v1/messages/${await queueOne(gateway, ws)}/cancel` }),
  },
  {
    route: 'GET /api/v1/templates',
    scope: 'templates:read',
    ok: 200,
    prepare: async () => ({ method: 'GET', path: '/api/v1/templates' }),
  },
  {
    route: 'GET /api/v1/oas',
    scope: 'templates:read',
    ok: 200,
    prepare: async () => ({ method: 'GET', path: '/api/v1/oas' }),
  },
  {
    route: 'GET /api/v1/quota',
    scope: 'messages:read',
    ok: 200,
    prepare: async () => ({ method: 'GET', path: '/api/v1/quota' }),
  },
];

describe.each(STORE_KINDS)('security contract (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let other: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
    other = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  const call = (prepared: PreparedRequest, options: { key?: string; keyHeader?: 'bearer' | 'x-api-key'; headers?: Record<string, string> } = {}): Promise<TestResponse> =>
    gateway.request(prepared.method, prepared.path, { ...options, body: prepared.body });

  it('covers every /api/v1 route the OpenAPI document lists', async () => {
    const document = (await gateway.request('GET', '/openapi.json')).body;
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v1'))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`));
    expect(documented.sort()).toEqual(ROUTES.map((route) => route.route).sort());
  });

  describe.each(ROUTES.map((route) => [route.route, route] as const))('%s', (_name, route) => {
    it(`succeeds with a key holding ${route.scope}, presented as Bearer`, async () => {
      const response = await call(await route.prepare(gateway, workspace), { key: workspace.apiKey });
      expectStatus(response, route.ok);
    });

    it('is 401 without a key', async () => {
      expectError(await call(await route.prepare(gateway, workspace)), 401);
    });

    it('is 401 with a wrong key, as Bearer or X-API-Key', async () => {
      const prepared = await route.prepare(gateway, workspace);
      expectError(await call(prepared, { key: 'tms_live_thisIsNotAKeyThatExists0000000000000' }), 401);
      expectError(await call(prepared, { key: 'tms_live_thisIsNotAKeyThatExists0000000000000', keyHeader: 'x-api-key' }), 401);
      // A real key under a scheme other than Bearer is not a key.
      expectError(await call(prepared, { headers: { authorization: `Basic ${workspace.apiKey}` } }), 401);
    });

    it('is 401 with a revoked key, at once', async () => {
      const key = await createKey(gateway, workspace.workspaceId, SCOPES_ALL);
      expectStatus(await call(await route.prepare(gateway, workspace), { key: key.key }), route.ok);
      const revoked = await gateway.admin('POST', `/api-keys/${key.id}/revoke`);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body.revoked_at).toEqual(expect.any(String));
      expectError(await call(await route.prepare(gateway, workspace), { key: key.key }), 401);
      expectError(await call(await route.prepare(gateway, workspace), { key: key.key, keyHeader: 'x-api-key' }), 401);
    });

    it('accepts the key as X-API-Key exactly like Bearer', async () => {
      const response = await call(await route.prepare(gateway, workspace), { key: workspace.apiKey, keyHeader: 'x-api-key' });
      expectStatus(response, route.ok);
    });

    it(`is 403 for a key without ${route.scope}`, async () => {
      const key = await createKey(
        gateway,
        workspace.workspaceId,
        SCOPES_ALL.filter((scope) => scope !== route.scope),
      );
      const prepared = await route.prepare(gateway, workspace);
      expectError(await call(prepared, { key: key.key }), 403, new RegExp(route.scope));
      expectError(await call(prepared, { key: key.key, keyHeader: 'x-api-key' }), 403);
      // The same key with only this scope gets through.
      const only = await createKey(gateway, workspace.workspaceId, [route.scope]);
      expectStatus(await call(await route.prepare(gateway, workspace), { key: only.key }), route.ok);
    });

    it('is 403 while the workspace is suspended, and works again after resume', async () => {
      const paused = await seedWorkspace(gateway);
      const prepared = await route.prepare(gateway, paused);
      const suspended = await gateway.admin('POST', `/workspaces/${paused.workspaceId}/suspend`);
      expect(suspended.status, suspended.text).toBe(200);
      expect(suspended.body.status).toBe('suspended');
      expectError(await call(prepared, { key: paused.apiKey }), 403, /suspend|paused/i);
      expectError(await call(prepared, { key: paused.apiKey, keyHeader: 'x-api-key' }), 403);
      const resumed = await gateway.admin('POST', `/workspaces/${paused.workspaceId}/resume`);
      expect(resumed.status, resumed.text).toBe(200);
      expect(resumed.body.status).toBe('active');
      expectStatus(await call(prepared, { key: paused.apiKey }), route.ok);
    });
  });

  describe("another workspace's resources are not found (404)", () => {
    it("GET /messages/:id of another workspace's message is 404; its owner still sees it", async () => {
      const theirs = await queueOne(gateway, other);
      expectError(await gateway.request('GET', `/api/v1/messages/${theirs}`, { key: workspace.apiKey }), 404);
      const own = await gateway.request('GET', `/api/v1/messages/${theirs}`, { key: other.apiKey });
      expectStatus(own, 200);
      expect(own.body.msg_id).toBe(theirs);
    });

    it("cancel of another workspace's message is 404 and leaves it queued and charged", async () => {
      const theirs = await queueOne(gateway, other);
      const balance = (await walletOf(gateway, other.workspaceId)).balance;
      expectError(await gateway.request('POST', `/api/v1/messages/${theirs}/cancel`, { key: workspace.apiKey }), 404);
      const own = await gateway.request('GET', `/api/v1/messages/${theirs}`, { key: other.apiKey });
      expectStatus(own, 200);
      expect(own.body.status).toBe('queued');
      expect((await walletOf(gateway, other.workspaceId)).balance).toBe(balance);
    });

    it.each(['send', 'batch', 'rsa'] as const)("%s with another workspace's template_id is 404 and charges nothing", async (path) => {
      const before = await walletOf(gateway, workspace.workspaceId);
      const body =
        path === 'send'
          ? { template_id: other.templateId, phone: '0912345678', template_data: VALID_DATA }
          : path === 'batch'
            ? { template_id: other.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }] }
            : { template_id: other.templateId, recipients: [{ rsa_phone: rsaCiphertext(), template_data: VALID_DATA }] };
      expectError(await gateway.request('POST', `/api/v1/messages/${path}`, { key: workspace.apiKey, body }), 404, new RegExp(other.templateId));
      const after = await walletOf(gateway, workspace.workspaceId);
      expect(after.balance).toBe(before.balance);
      expect(after.ledger).toEqual(before.ledger);
      expect((await listAll(gateway, workspace)).filter((message) => message.template_id === other.templateId)).toEqual([]);
    });

    it("quota for another workspace's oa_id is 404", async () => {
      expectError(await gateway.request('GET', `/api/v1/quota?oa_id=${other.oaId}`, { key: workspace.apiKey }), 404);
      const own = await gateway.request('GET', `/api/v1/quota?oa_id=${other.oaId}`, { key: other.apiKey });
      expectStatus(own, 200);
      expect(own.body.count).toBe(1);
    });

    it("templates filtered by another workspace's oa_id is an empty list", async () => {
      const response = await gateway.request('GET', `/api/v1/templates?oa_id=${other.oaId}`, { key: workspace.apiKey });
      expectStatus(response, 200);
      expect(response.body).toEqual({ templates: [], count: 0 });
      const own = await gateway.request('GET', `/api/v1/templates?oa_id=${other.oaId}`, { key: other.apiKey });
      expect(own.body.count).toBe(1);
    });

    it("lists never show another workspace's messages, templates or sender accounts", async () => {
      await queueOne(gateway, other, { tracking_id: 'theirs-only' });
      const messages = await gateway.request('GET', '/api/v1/messages?tracking_id=theirs-only', { key: workspace.apiKey });
      expect(messages.body).toMatchObject({ messages: [], count: 0 });
      const byOa = await gateway.request('GET', `/api/v1/messages?oa_id=${other.oaId}`, { key: workspace.apiKey });
      expect(byOa.body).toMatchObject({ messages: [], count: 0 });
      const templates = await gateway.request('GET', '/api/v1/templates', { key: workspace.apiKey });
      expect(templates.body.templates.map((template: { template_id: string }) => template.template_id)).toEqual([workspace.templateId]);
      const oas = await gateway.request('GET', '/api/v1/oas', { key: workspace.apiKey });
      expect(oas.body).toEqual({ oas: [{ oa_id: workspace.oaId, name: expect.any(String) }], count: 1 });
      const quota = await gateway.request('GET', '/api/v1/quota', { key: workspace.apiKey });
      expect(quota.body.quotas.map((entry: { oa_id: string }) => entry.oa_id)).toEqual([workspace.oaId]);
    });
  });
});
