/**
 * The shared security contract: every /api/v1 route, with its scope, must refuse missing, wrong
 * and revoked keys (401), keys without the scope and suspended workspaces (403), accept X-API-Key
 * like Bearer, and never show another workspace's resources (404). The key, its scope and its rate
 * limit are checked before the request is read: an invalid request with a bad key is 401, not 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorType } from '../../src/services/errors.ts';
import { SCOPES_ALL, STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { createKey, expectError, expectStatus, listAll, queueOne, rsaCiphertext, walletOf } from './helpers.ts';

type Scope = 'messages:send' | 'messages:read' | 'templates:read';

interface PreparedRequest {
  method: string;
  path: string;
  body?: unknown;
  /** A body sent as is with Content-Type: application/json (for JSON that does not parse). */
  rawJson?: string;
}

interface RouteCase {
  route: string;
  scope: Scope;
  /** Status of a successful call. */
  ok: number;
  /** Builds a request that succeeds for this workspace (creating what it needs). */
  prepare(gateway: TestGateway, workspace: SeededWorkspace): Promise<PreparedRequest>;
  /** A request a good key gets this error for, from its body, query or JSON; none when the route takes no input to get wrong. */
  invalid?: { type: ErrorType; prepare(gateway: TestGateway, workspace: SeededWorkspace): Promise<PreparedRequest> };
}

/** EVERY route of /api/v1 with the scope docs/api.md gives it. */
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
    invalid: { type: 'invalid_request', prepare: async () => ({ method: 'POST', path: '/api/v1/messages/send', body: {} }) },
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
    invalid: { type: 'invalid_request', prepare: async (_gateway, ws) => ({ method: 'POST', path: '/api/v1/messages/batch', body: { template_id: ws.templateId, recipients: [] } }) },
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
    invalid: { type: 'invalid_tracking_id', prepare: async (_gateway, ws) => ({ method: 'POST', path: '/api/v1/messages/rsa', body: { template_id: ws.templateId, recipients: [{ rsa_phone: rsaCiphertext(), tracking_id: 'not valid' }] } }) },
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
    invalid: { type: 'invalid_request', prepare: async () => ({ method: 'GET', path: '/api/v1/messages?limit=0' }) },
  },
  {
    route: 'POST /api/v1/messages/:id/cancel',
    scope: 'messages:send',
    ok: 200,
    prepare: async (gateway, ws) => ({ method: 'POST', path: `/api/v1/messages/${await queueOne(gateway, ws)}/cancel` }),
    invalid: { type: 'invalid_json', prepare: async (gateway, ws) => ({ method: 'POST', path: `/api/v1/messages/${await queueOne(gateway, ws)}/cancel`, rawJson: '{"reason":' }) },
  },
  {
    route: 'GET /api/v1/templates',
    scope: 'templates:read',
    ok: 200,
    prepare: async () => ({ method: 'GET', path: '/api/v1/templates' }),
    invalid: { type: 'invalid_request', prepare: async () => ({ method: 'GET', path: '/api/v1/templates?status=ON' }) },
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
    invalid: { type: 'invalid_request', prepare: async () => ({ method: 'GET', path: '/api/v1/quota?oa=x' }) },
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
    prepared.rawJson === undefined
      ? gateway.request(prepared.method, prepared.path, { ...options, body: prepared.body })
      : gateway.request(prepared.method, prepared.path, { ...options, rawBody: prepared.rawJson, headers: { ...options.headers, 'content-type': 'application/json' } });

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
      expectError(await call(await route.prepare(gateway, workspace)), 'unauthenticated');
    });

    it('is 401 with a wrong key, as Bearer or X-API-Key', async () => {
      const prepared = await route.prepare(gateway, workspace);
      expectError(await call(prepared, { key: 'tms_live_thisIsNotAKeyThatExists0000000000000' }), 'unauthenticated');
      expectError(await call(prepared, { key: 'tms_live_thisIsNotAKeyThatExists0000000000000', keyHeader: 'x-api-key' }), 'unauthenticated');
      // A real key under a scheme other than Bearer is not a key.
      expectError(await call(prepared, { headers: { authorization: `Basic ${workspace.apiKey}` } }), 'unauthenticated');
    });

    it('is 401 with a revoked key, at once', async () => {
      const key = await createKey(gateway, workspace.workspaceId, SCOPES_ALL);
      expectStatus(await call(await route.prepare(gateway, workspace), { key: key.key }), route.ok);
      const revoked = await gateway.admin('POST', `/api-keys/${key.id}/revoke`);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body.revoked_at).toEqual(expect.any(String));
      expectError(await call(await route.prepare(gateway, workspace), { key: key.key }), 'unauthenticated');
      expectError(await call(await route.prepare(gateway, workspace), { key: key.key, keyHeader: 'x-api-key' }), 'unauthenticated');
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
      expectError(await call(prepared, { key: key.key }), 'forbidden_scope', new RegExp(route.scope));
      expectError(await call(prepared, { key: key.key, keyHeader: 'x-api-key' }), 'forbidden_scope');
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
      expectError(await call(prepared, { key: paused.apiKey }), 'workspace_suspended');
      expectError(await call(prepared, { key: paused.apiKey, keyHeader: 'x-api-key' }), 'workspace_suspended');
      const resumed = await gateway.admin('POST', `/workspaces/${paused.workspaceId}/resume`);
      expect(resumed.status, resumed.text).toBe(200);
      expect(resumed.body.status).toBe('active');
      expectStatus(await call(prepared, { key: paused.apiKey }), route.ok);
    });

    const { invalid } = route;
    if (invalid) {
      it(`checks the key before the request: an invalid request (${invalid.type} with a good key) is 401, 403 or 429 first`, async () => {
        const bad = await invalid.prepare(gateway, workspace);
        expectError(await call(bad, { key: workspace.apiKey }), invalid.type);
        expectError(await call(bad), 'unauthenticated');
        expectError(await call(bad, { key: 'tms_live_thisIsNotAKeyThatExists0000000000000' }), 'unauthenticated');
        const unscoped = await createKey(gateway, workspace.workspaceId, SCOPES_ALL.filter((scope) => scope !== route.scope));
        expectError(await call(bad, { key: unscoped.key }), 'forbidden_scope');
        const paused = await seedWorkspace(gateway);
        const pausedBad = await invalid.prepare(gateway, paused);
        expect((await gateway.admin('POST', `/workspaces/${paused.workspaceId}/suspend`)).status).toBe(200);
        expectError(await call(pausedBad, { key: paused.apiKey }), 'workspace_suspended');
      });

      it('counts invalid requests against the rate limit and answers 429 before reading the request', async () => {
        // 1 request per second allows a burst of 2: the third quick request is over the limit.
        const slow = await createKey(gateway, workspace.workspaceId, SCOPES_ALL, { rate_limit_per_second: 1 });
        const bad = await invalid.prepare(gateway, workspace);
        expectError(await call(bad, { key: slow.key }), invalid.type);
        expectError(await call(bad, { key: slow.key }), invalid.type);
        const limited = await call(bad, { key: slow.key });
        expectError(limited, 'rate_limited');
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      });
    }
  });

  describe("another workspace's resources are not found (404)", () => {
    it("GET /messages/:id of another workspace's message is 404; its owner still sees it", async () => {
      const theirs = await queueOne(gateway, other);
      expectError(await gateway.request('GET', `/api/v1/messages/${theirs}`, { key: workspace.apiKey }), 'message_not_found');
      const own = await gateway.request('GET', `/api/v1/messages/${theirs}`, { key: other.apiKey });
      expectStatus(own, 200);
      expect(own.body.msg_id).toBe(theirs);
    });

    it("cancel of another workspace's message is 404 and leaves it queued and charged", async () => {
      const theirs = await queueOne(gateway, other);
      const balance = (await walletOf(gateway, other.workspaceId)).balance;
      expectError(await gateway.request('POST', `/api/v1/messages/${theirs}/cancel`, { key: workspace.apiKey }), 'message_not_found');
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
      expectError(await gateway.request('POST', `/api/v1/messages/${path}`, { key: workspace.apiKey, body }), 'template_not_found');
      const after = await walletOf(gateway, workspace.workspaceId);
      expect(after.balance).toBe(before.balance);
      expect(after.ledger).toEqual(before.ledger);
      expect((await listAll(gateway, workspace)).filter((message) => message.template_id === other.templateId)).toEqual([]);
    });

    it("quota for another workspace's oa_id is 404", async () => {
      expectError(await gateway.request('GET', `/api/v1/quota?oa_id=${other.oaId}`, { key: workspace.apiKey }), 'sender_account_not_found');
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
