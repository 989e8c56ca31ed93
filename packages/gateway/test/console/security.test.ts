/**
 * The console's shared security contract, the counterpart of test/api/security.test.ts: EVERY
 * /console/api route, with the minimum role the contract gives it, refuses a request without a
 * session and with an expired one (401), a role below its minimum (403), another workspace's ids
 * (404, as if they did not exist), and, for every change, a missing or wrong X-CSRF-Token (403);
 * no refused request changes anything. The routes open without a session (sign-in, invitations)
 * refuse a change from another origin instead. A route missing from the table fails the suite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorType } from '../../src/services/errors.ts';
import type { ConsoleRole } from '../../src/store/schema.ts';
import { STORE_KINDS, VALID_DATA, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { createKey, expectError, expectStatus, queueOne } from '../api/helpers.ts';
import { createConsoleUser, signInConsole, type ConsoleCredentials, type ConsoleSession } from '../console-support.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';
import { insertDelivery } from './delivery-fixtures.ts';

interface Prepared {
  method: string;
  path: string;
  body?: unknown;
}

/** One workspace as the suite uses it: its seed, a user of each role, and its owner's session. */
interface Tenant {
  workspace: SeededWorkspace;
  users: Record<ConsoleRole, ConsoleCredentials>;
  sessions: Record<ConsoleRole, ConsoleSession>;
}

interface Setting {
  gateway: TestGateway;
  receiver: Receiver;
}

interface RouteCase {
  route: string;
  /** The least role that may call it; `open` for the routes that work without a session. */
  role: ConsoleRole | 'open';
  ok: number;
  /** A request that succeeds for `tenant` (creating what it needs). */
  prepare(setting: Setting, tenant: Tenant): Promise<Prepared>;
  /** The same request naming `other`'s resource, from `tenant`: 404 with this type. */
  foreign?: { type: ErrorType; prepare(setting: Setting, tenant: Tenant, other: Tenant): Promise<Prepared> };
  /** It ends the session that calls it: each call gets a fresh one. */
  endsSession?: boolean;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now()}${(counter += 1)}`;

const keyWithWebhook = async (setting: Setting, tenant: Tenant) =>
  createKey(setting.gateway, tenant.workspace.workspaceId, ['messages:send', 'messages:read'], { webhook_url: setting.receiver.url() });
const failedDelivery = async (setting: Setting, tenant: Tenant) => {
  const key = await keyWithWebhook(setting, tenant);
  return insertDelivery(setting.gateway, { workspaceId: tenant.workspace.workspaceId, apiKeyId: key.id, url: setting.receiver.url(), status: 'failed' });
};
const member = async (setting: Setting, tenant: Tenant, role: ConsoleRole = 'viewer') => (await createConsoleUser(setting.gateway, tenant.workspace.workspaceId, role)).userId;
const get = (path: string) => async (): Promise<Prepared> => ({ method: 'GET', path });

/** EVERY route of /console/api, with the minimum role of the console API contract. */
const ROUTES: RouteCase[] = [
  { route: 'POST /console/api/session', role: 'open', ok: 200, prepare: async (_setting, tenant) => ({ method: 'POST', path: '/console/api/session', body: { email: tenant.users.viewer.email, password: tenant.users.viewer.password } }) },
  { route: 'GET /console/api/session', role: 'viewer', ok: 200, prepare: get('/console/api/session') },
  { route: 'DELETE /console/api/session', role: 'viewer', ok: 204, endsSession: true, prepare: async () => ({ method: 'DELETE', path: '/console/api/session' }) },
  { route: 'POST /console/api/session/sign-out-everywhere', role: 'viewer', ok: 204, endsSession: true, prepare: async () => ({ method: 'POST', path: '/console/api/session/sign-out-everywhere' }) },
  {
    route: 'GET /console/api/invitations/:token',
    role: 'open',
    ok: 200,
    prepare: async (setting, tenant) => {
      const invited = await setting.gateway.admin('POST', `/workspaces/${tenant.workspace.workspaceId}/users`, { email: `${unique('inv')}@example.vn`, role: 'viewer' });
      return { method: 'GET', path: `/console/api/invitations/${invited.body.invitation_url.split('/').pop()}` };
    },
  },
  {
    route: 'POST /console/api/invitations/:token/accept',
    role: 'open',
    ok: 200,
    prepare: async (setting, tenant) => {
      const invited = await setting.gateway.admin('POST', `/workspaces/${tenant.workspace.workspaceId}/users`, { email: `${unique('inv')}@example.vn`, role: 'viewer' });
      return { method: 'POST', path: `/console/api/invitations/${invited.body.invitation_url.split('/').pop()}/accept`, body: { password: 'a long enough password' } };
    },
  },
  { route: 'GET /console/api/overview', role: 'viewer', ok: 200, prepare: get('/console/api/overview') },
  { route: 'GET /console/api/messages', role: 'viewer', ok: 200, prepare: get('/console/api/messages') },
  {
    route: 'GET /console/api/messages/:id',
    role: 'viewer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'GET', path: `/console/api/messages/${await queueOne(setting.gateway, tenant.workspace)}` }),
    foreign: { type: 'message_not_found', prepare: async (setting, _tenant, other) => ({ method: 'GET', path: `/console/api/messages/${await queueOne(setting.gateway, other.workspace)}` }) },
  },
  {
    route: 'POST /console/api/messages/send',
    role: 'developer',
    ok: 202,
    prepare: async (_setting, tenant) => ({ method: 'POST', path: '/console/api/messages/send', body: { template_id: tenant.workspace.templateId, phone: '0912345678', template_data: VALID_DATA } }),
    foreign: {
      type: 'api_key_not_found',
      prepare: async (_setting, tenant, other) => ({
        method: 'POST',
        path: '/console/api/messages/send',
        body: { template_id: tenant.workspace.templateId, phone: '0912345678', template_data: VALID_DATA, api_key_id: other.workspace.apiKeyId },
      }),
    },
  },
  {
    route: 'POST /console/api/messages/batch',
    role: 'developer',
    ok: 202,
    prepare: async (_setting, tenant) => ({ method: 'POST', path: '/console/api/messages/batch', body: { template_id: tenant.workspace.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }] } }),
    foreign: {
      type: 'template_not_found',
      prepare: async (_setting, _tenant, other) => ({ method: 'POST', path: '/console/api/messages/batch', body: { template_id: other.workspace.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }] } }),
    },
  },
  {
    route: 'POST /console/api/messages/csv-preview',
    role: 'developer',
    ok: 200,
    prepare: async (_setting, tenant) => ({ method: 'POST', path: '/console/api/messages/csv-preview', body: { template_id: tenant.workspace.templateId, csv: 'phone,name,code\n0912345678,An,A1\n' } }),
    foreign: {
      type: 'template_not_found',
      prepare: async (_setting, _tenant, other) => ({ method: 'POST', path: '/console/api/messages/csv-preview', body: { template_id: other.workspace.templateId, csv: 'phone,name,code\n0912345678,An,A1\n' } }),
    },
  },
  {
    route: 'POST /console/api/messages/:id/cancel',
    role: 'developer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'POST', path: `/console/api/messages/${await queueOne(setting.gateway, tenant.workspace)}/cancel` }),
    foreign: { type: 'message_not_found', prepare: async (setting, _tenant, other) => ({ method: 'POST', path: `/console/api/messages/${await queueOne(setting.gateway, other.workspace)}/cancel` }) },
  },
  { route: 'GET /console/api/templates', role: 'viewer', ok: 200, prepare: get('/console/api/templates') },
  { route: 'GET /console/api/sender-accounts', role: 'viewer', ok: 200, prepare: get('/console/api/sender-accounts') },
  { route: 'GET /console/api/wallet', role: 'viewer', ok: 200, prepare: get('/console/api/wallet') },
  { route: 'GET /console/api/wallet/ledger.csv', role: 'viewer', ok: 200, prepare: get('/console/api/wallet/ledger.csv') },
  { route: 'GET /console/api/api-keys', role: 'viewer', ok: 200, prepare: get('/console/api/api-keys') },
  { route: 'POST /console/api/api-keys', role: 'developer', ok: 201, prepare: async () => ({ method: 'POST', path: '/console/api/api-keys', body: { name: 'k', scopes: ['messages:read'] } }) },
  {
    route: 'PATCH /console/api/api-keys/:id',
    role: 'developer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'PATCH', path: `/console/api/api-keys/${(await keyWithWebhook(setting, tenant)).id}`, body: { name: unique('renamed') } }),
    foreign: { type: 'api_key_not_found', prepare: async (setting, _tenant, other) => ({ method: 'PATCH', path: `/console/api/api-keys/${(await keyWithWebhook(setting, other)).id}`, body: { webhook_url: null } }) },
  },
  {
    route: 'POST /console/api/api-keys/:id/revoke',
    role: 'developer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'POST', path: `/console/api/api-keys/${(await keyWithWebhook(setting, tenant)).id}/revoke` }),
    foreign: { type: 'api_key_not_found', prepare: async (setting, _tenant, other) => ({ method: 'POST', path: `/console/api/api-keys/${(await keyWithWebhook(setting, other)).id}/revoke` }) },
  },
  {
    route: 'POST /console/api/api-keys/:id/test-report',
    role: 'developer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'POST', path: `/console/api/api-keys/${(await keyWithWebhook(setting, tenant)).id}/test-report` }),
    foreign: { type: 'api_key_not_found', prepare: async (setting, _tenant, other) => ({ method: 'POST', path: `/console/api/api-keys/${(await keyWithWebhook(setting, other)).id}/test-report` }) },
  },
  { route: 'GET /console/api/webhook-deliveries', role: 'viewer', ok: 200, prepare: get('/console/api/webhook-deliveries') },
  {
    route: 'GET /console/api/webhook-deliveries/:id',
    role: 'viewer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'GET', path: `/console/api/webhook-deliveries/${await failedDelivery(setting, tenant)}` }),
    foreign: { type: 'webhook_delivery_not_found', prepare: async (setting, _tenant, other) => ({ method: 'GET', path: `/console/api/webhook-deliveries/${await failedDelivery(setting, other)}` }) },
  },
  {
    route: 'POST /console/api/webhook-deliveries/:id/redeliver',
    role: 'developer',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'POST', path: `/console/api/webhook-deliveries/${await failedDelivery(setting, tenant)}/redeliver` }),
    foreign: { type: 'webhook_delivery_not_found', prepare: async (setting, _tenant, other) => ({ method: 'POST', path: `/console/api/webhook-deliveries/${await failedDelivery(setting, other)}/redeliver` }) },
  },
  {
    route: 'POST /console/api/webhook-deliveries/redeliver-failed',
    role: 'developer',
    ok: 200,
    prepare: async (setting, tenant) => {
      await failedDelivery(setting, tenant);
      return { method: 'POST', path: '/console/api/webhook-deliveries/redeliver-failed', body: { failed_since: '2020-01-01T00:00:00Z' } };
    },
  },
  { route: 'GET /console/api/team', role: 'viewer', ok: 200, prepare: get('/console/api/team') },
  { route: 'POST /console/api/team/invitations', role: 'owner', ok: 201, prepare: async () => ({ method: 'POST', path: '/console/api/team/invitations', body: { email: `${unique('member')}@example.vn`, role: 'viewer' } }) },
  {
    route: 'PATCH /console/api/team/:user_id',
    role: 'owner',
    ok: 200,
    prepare: async (setting, tenant) => ({ method: 'PATCH', path: `/console/api/team/${await member(setting, tenant)}`, body: { role: 'developer' } }),
    foreign: { type: 'console_user_not_found', prepare: async (setting, _tenant, other) => ({ method: 'PATCH', path: `/console/api/team/${await member(setting, other)}`, body: { role: 'owner' } }) },
  },
  {
    route: 'DELETE /console/api/team/:user_id',
    role: 'owner',
    ok: 204,
    prepare: async (setting, tenant) => ({ method: 'DELETE', path: `/console/api/team/${await member(setting, tenant)}` }),
    foreign: { type: 'console_user_not_found', prepare: async (setting, _tenant, other) => ({ method: 'DELETE', path: `/console/api/team/${await member(setting, other, 'owner')}` }) },
  },
  { route: 'GET /console/api/activity', role: 'owner', ok: 200, prepare: get('/console/api/activity') },
];

/**
 * "METHOD /path" of every route in Fastify's printRoutes() tree, where each line is one path
 * segment under its parent's (indented four characters per level) with its methods.
 */
function routesInTree(tree: string): string[] {
  const segments: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const node = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!node) continue;
    segments.length = node[1]!.length / 4;
    segments.push(node[2]!);
    const methods = (node[3] ?? '').split(', ').filter((method) => method !== '' && method !== 'HEAD');
    for (const method of methods) routes.push(`${method} ${segments.join('')}`);
  }
  return routes;
}

const ROLES: ConsoleRole[] = ['viewer', 'developer', 'owner'];
const below = (role: ConsoleRole): ConsoleRole[] => ROLES.slice(0, ROLES.indexOf(role));
const IDLE_MINUTES = 30;

describe.each(STORE_KINDS)('console security contract (%s)', (kind) => {
  let now = Date.now();
  let setting: Setting;
  let tenant: Tenant;
  let other: Tenant;

  async function tenantOf(gateway: TestGateway): Promise<Tenant> {
    const workspace = await seedWorkspace(gateway);
    const users = {} as Record<ConsoleRole, ConsoleCredentials>;
    const sessions = {} as Record<ConsoleRole, ConsoleSession>;
    for (const role of ROLES) {
      users[role] = await createConsoleUser(gateway, workspace.workspaceId, role);
      sessions[role] = await signInConsole(gateway, users[role].email, users[role].password);
    }
    return { workspace, users, sessions };
  }

  beforeAll(async () => {
    const gateway = await startTestGateway(kind, { clock: () => now, env: { TMS_CONSOLE_SESSION_IDLE_MINUTES: String(IDLE_MINUTES) } });
    setting = { gateway, receiver: await startReceiver() };
    tenant = await tenantOf(gateway);
    other = await tenantOf(gateway);
  });
  afterAll(async () => {
    await setting?.gateway.close();
    await setting?.receiver.close();
  });

  /**
   * A session of `role` in `of` to make the call with: the shared one, or for routes that end
   * sessions (sign-out everywhere ends all of its user's) one of a user made for this call.
   */
  const sessionFor = async (route: RouteCase, role: ConsoleRole, of: Tenant = tenant): Promise<ConsoleSession> => {
    if (!route.endsSession) return of.sessions[role];
    const user = await createConsoleUser(setting.gateway, of.workspace.workspaceId, role);
    return signInConsole(setting.gateway, user.email, user.password);
  };

  const send = (session: ConsoleSession | null, prepared: Prepared, options: { csrf?: string | null } = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = {};
    if (session) headers.cookie = session.cookie;
    const csrf = options.csrf === undefined ? session?.csrfToken : options.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    return httpRequest(setting.gateway.url, prepared.method, prepared.path, { body: prepared.body, headers });
  };

  /**
   * What a workspace's people can see of it, as its owner reads it: keys, team, reports, wallet,
   * messages, activity. Times that move without a change (last use, last sign-in) are left out.
   */
  async function snapshot(of: Tenant): Promise<unknown> {
    const read = async (path: string) => {
      const response = await of.sessions.owner.request('GET', path);
      expect(response.status, `${path}: ${response.text}`).toBe(200);
      return response.body;
    };
    return {
      keys: (await read('/console/api/api-keys')).api_keys.map(({ last_used_at: _used, ...key }: any) => key),
      team: (await read('/console/api/team')).users.map(({ last_sign_in_at: _signedIn, ...user }: any) => user),
      deliveries: (await read('/console/api/webhook-deliveries?limit=200')).deliveries,
      wallet: await read('/console/api/wallet?limit=200'),
      messages: (await read('/console/api/messages?limit=200')).messages,
      activity: (await read('/console/api/activity?limit=200')).entries,
      received: setting.receiver.hooks.length,
    };
  }

  /** Runs a refused request and checks that it changed nothing, and that the caller's session still works. */
  async function expectRefusedWithoutChange(of: Tenant, run: () => Promise<TestResponse>, type: ErrorType, session: ConsoleSession | null): Promise<void> {
    const before = await snapshot(of);
    expectError(await run(), type);
    expect(await snapshot(of)).toEqual(before);
    if (session) expectStatus(await session.request('GET', '/console/api/session'), 200);
  }

  it('covers every /console/api route the gateway serves, with the roles the contract gives them', async () => {
    const document = (await setting.gateway.request('GET', '/console/api/openapi.json')).body;
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map((route) => route.route).sort());
    // A route hidden from the document (or registered without its schema) would slip past the
    // comparison above: the router's own list of /console/api routes must be the table too.
    const served = routesInTree(setting.gateway.service.app!.printRoutes({ commonPrefix: false })).filter(
      (route) => route.split(' ')[1]!.startsWith('/console/api/') && route !== 'GET /console/api/openapi.json',
    );
    expect(served.sort()).toEqual(ROUTES.map((route) => route.route).sort());
  });

  describe.each(ROUTES.map((route) => [route.route, route] as const))('%s', (_name, route) => {
    if (route.role === 'open') {
      it('works without a session', async () => {
        expectStatus(await send(null, await route.prepare(setting, tenant)), route.ok);
      });
      if (route.route.startsWith('POST')) {
        it("refuses a change from another site's page, and changes nothing", async () => {
          const prepared = await route.prepare(setting, tenant);
          const request = () => httpRequest(setting.gateway.url, prepared.method, prepared.path, { body: prepared.body, headers: { origin: 'https://evil.example' } });
          await expectRefusedWithoutChange(tenant, request, 'csrf_failed', null);
          // The same request from the console itself still works: the refusal used nothing up.
          expectStatus(await send(null, prepared), route.ok);
        });
      }
      return;
    }
    const minimum = route.role;
    const changes = !route.route.startsWith('GET');

    it(`succeeds for the ${minimum} role and every role above it`, async () => {
      for (const role of ROLES.slice(ROLES.indexOf(minimum))) {
        expectStatus(await send(await sessionFor(route, role), await route.prepare(setting, tenant)), route.ok);
      }
    });

    it('is 401 without a session, or with a cookie that is not a session', async () => {
      const prepared = await route.prepare(setting, tenant);
      await expectRefusedWithoutChange(tenant, () => send(null, prepared), 'unauthenticated', null);
      const forged = { ...tenant.sessions.owner, cookie: 'tms_console_session=not-a-session-at-all-0000000000000000000000' };
      await expectRefusedWithoutChange(tenant, () => send(forged, prepared), 'unauthenticated', null);
    });

    it(`is 401 once the session has been idle for ${IDLE_MINUTES} minutes`, async () => {
      const session = await signInConsole(setting.gateway, tenant.users.owner.email, tenant.users.owner.password);
      const prepared = await route.prepare(setting, tenant);
      const before = await snapshot(tenant);
      const start = now;
      now += (IDLE_MINUTES + 1) * 60_000;
      try {
        expectError(await send(session, prepared), 'unauthenticated');
      } finally {
        now = start;
      }
      expect(await snapshot(tenant)).toEqual(before);
    });

    for (const role of below(minimum)) {
      it(`is 403 for the ${role} role, and changes nothing`, async () => {
        const session = await sessionFor(route, role);
        const prepared = await route.prepare(setting, tenant);
        await expectRefusedWithoutChange(tenant, () => send(session, prepared), 'forbidden_role', session);
      });
    }

    if (changes) {
      it('is 403 without the X-CSRF-Token header or with a wrong one, and changes nothing', async () => {
        const session = await sessionFor(route, 'owner');
        const prepared = await route.prepare(setting, tenant);
        await expectRefusedWithoutChange(tenant, () => send(session, prepared, { csrf: null }), 'csrf_failed', session);
        await expectRefusedWithoutChange(tenant, () => send(session, prepared, { csrf: other.sessions.owner.csrfToken }), 'csrf_failed', session);
        await expectRefusedWithoutChange(tenant, () => send(session, prepared, { csrf: `${session.csrfToken}x` }), 'csrf_failed', session);
      });
    }

    const { foreign } = route;
    if (foreign) {
      it(`is 404 (${foreign.type}) for another workspace's resource, which stays as it was`, async () => {
        const prepared = await foreign.prepare(setting, tenant, other);
        const before = await snapshot(other);
        await expectRefusedWithoutChange(tenant, () => send(tenant.sessions.owner, prepared), foreign.type, tenant.sessions.owner);
        expect(await snapshot(other)).toEqual(before);
      });
    }
  });
});
