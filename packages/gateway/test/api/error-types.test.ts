/**
 * The error catalogue from the caller's side: every type an /api/v1 or /admin/v1 request can
 * produce, provoked over real HTTP, one row per request and the type it must answer with (in the
 * error body, or as the prefix of a per-recipient error). A type without a row here must say where
 * else it is provoked, so a new catalogue entry cannot go untested unnoticed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_TYPES, type ErrorType } from '../../src/services/errors.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { createKey, expectError, putTemplate, queueOne, rsaCiphertext, sendOne, setMessageStatus, unique } from './helpers.ts';
import { rawHttp, requestHead } from './raw-http.ts';

interface Context {
  gateway: TestGateway;
  /** A workspace with every scope, money and quota to spare. */
  ws: SeededWorkspace;
}

interface Provocation {
  type: ErrorType;
  how: string;
  /** The type is the prefix of the first recipient's error in a 202 batch or RSA answer. */
  recipient?: true;
  request(context: Context): Promise<TestResponse>;
}

const send = ({ gateway, ws }: Context, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, ...body }, headers });

const PROVOCATIONS: Provocation[] = [
  { type: 'invalid_request', how: 'a send without phone', request: (context) => send(context, { phone: undefined }) },
  { type: 'invalid_request', how: 'a query parameter out of range', request: ({ gateway, ws }) => gateway.request('GET', '/api/v1/messages?limit=0', { key: ws.apiKey }) },
  {
    type: 'invalid_request',
    how: 'a path that is not valid percent-encoded UTF-8 (/api/v1)',
    request: ({ gateway, ws }) => rawHttp(gateway.url, requestHead('GET', '/api/v1/messages/%ED%A0%80', { Authorization: `Bearer ${ws.apiKey}` })),
  },
  {
    type: 'invalid_request',
    how: 'a path that is not valid percent-encoded UTF-8 (/admin/v1)',
    request: ({ gateway }) => rawHttp(gateway.url, requestHead('GET', '/admin/v1/webhook-deliveries/%ED%A0%80', { Authorization: `Bearer ${gateway.config.adminToken!}` })),
  },
  { type: 'invalid_request', how: 'a malformed request line', request: ({ gateway }) => rawHttp(gateway.url, 'NOT AN HTTP REQUEST') },
  { type: 'invalid_request', how: 'a header line without a colon', request: ({ gateway }) => rawHttp(gateway.url, `${requestHead('GET', '/api/v1/oas')}\r\nno colon here`) },
  { type: 'invalid_request', how: 'an HTTP/1.1 request without Host', request: ({ gateway, ws }) => rawHttp(gateway.url, `GET /api/v1/oas HTTP/1.1\r\nAuthorization: Bearer ${ws.apiKey}\r\nConnection: close`) },
  {
    type: 'invalid_json',
    how: 'a body that does not parse',
    request: ({ gateway, ws }) => gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody: '{"phone":', headers: { 'content-type': 'application/json' } }),
  },
  { type: 'invalid_tracking_id', how: 'a tracking_id with a space', request: (context) => send(context, { tracking_id: 'order 1' }) },
  { type: 'invalid_send_at', how: 'send_at that is not a date', request: (context) => send(context, { send_at: 'tomorrow' }) },
  { type: 'invalid_date_range', how: 'a list filter that is not a date', request: ({ gateway, ws }) => gateway.request('GET', '/api/v1/messages?from=yesterday', { key: ws.apiKey }) },
  { type: 'invalid_template_data', how: 'a send missing a required param', request: (context) => send(context, { template_data: { name: 'A' } }) },
  { type: 'missing_phone', how: 'a send whose phone has no digits', request: (context) => send(context, { phone: ' - . ' }) },
  { type: 'invalid_idempotency_key', how: 'an Idempotency-Key of 256 characters', request: (context) => send(context, {}, { 'idempotency-key': 'k'.repeat(256) }) },
  {
    type: 'template_not_enabled',
    how: 'a send of a PENDING_REVIEW template',
    request: async (context) => {
      const templateId = unique('tplpending');
      await putTemplate(context.gateway, context.ws.workspaceId, templateId, { oa_id: context.ws.oaId, status: 'PENDING_REVIEW' });
      return send(context, { template_id: templateId, template_data: { name: 'A' } });
    },
  },
  {
    type: 'sender_account_not_connected',
    how: 'a send through a disconnected sender account',
    request: async ({ gateway }) => {
      const ws = await seedWorkspace(gateway);
      // Only the platform disconnects an account (a refresh token it refuses): set the outcome directly.
      await gateway.runtime.store.db.updateTable('sender_accounts').set({ status: 'disconnected' }).where('oa_id', '=', ws.oaId).execute();
      return sendOne(gateway, ws);
    },
  },
  { type: 'unauthenticated', how: 'no API key', request: ({ gateway }) => gateway.request('GET', '/api/v1/templates') },
  { type: 'unauthenticated', how: 'a wrong operator token', request: ({ gateway }) => gateway.request('GET', '/admin/v1/workspaces', { key: 'not-the-operator-token' }) },
  {
    type: 'invalid_event_signature',
    how: 'a platform event without a signature',
    request: ({ gateway }) => gateway.request('POST', '/platform/zns/events', { body: { app_id: 'x', event_name: 'change_oa_daily_quota', timestamp: '1' } }),
  },
  { type: 'insufficient_balance', how: 'a send from an empty wallet', request: async ({ gateway }) => sendOne(gateway, await seedWorkspace(gateway, { balance: 0 })) },
  { type: 'account_cap_reached', how: 'a send at a message cap of 0', request: async ({ gateway }) => sendOne(gateway, await seedWorkspace(gateway, { messageCap: 0 })) },
  {
    type: 'forbidden_scope',
    how: 'a send with a read-only key',
    request: async ({ gateway, ws }) => {
      const key = await createKey(gateway, ws.workspaceId, ['messages:read']);
      return gateway.request('POST', '/api/v1/messages/send', { key: key.key, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } });
    },
  },
  {
    type: 'workspace_suspended',
    how: 'a key of a suspended workspace',
    request: async ({ gateway }) => {
      const paused = await seedWorkspace(gateway);
      await gateway.admin('POST', `/workspaces/${paused.workspaceId}/suspend`);
      return gateway.request('GET', '/api/v1/templates', { key: paused.apiKey });
    },
  },
  { type: 'route_not_found', how: 'an unknown path', request: ({ gateway, ws }) => gateway.request('GET', '/api/v1/nothing-here', { key: ws.apiKey }) },
  { type: 'message_not_found', how: 'an unknown msg_id', request: ({ gateway, ws }) => gateway.request('GET', '/api/v1/messages/msg_DOESNOTEXIST', { key: ws.apiKey }) },
  { type: 'template_not_found', how: 'a send of an unknown template', request: (context) => send(context, { template_id: 'no-such-template' }) },
  { type: 'sender_account_not_found', how: 'the quota of an unknown oa_id', request: ({ gateway, ws }) => gateway.request('GET', '/api/v1/quota?oa_id=no-such-oa', { key: ws.apiKey }) },
  { type: 'workspace_not_found', how: 'an unknown workspace (operator)', request: ({ gateway }) => gateway.admin('GET', '/workspaces/ws_DOESNOTEXIST') },
  { type: 'api_key_not_found', how: 'revoking an unknown key (operator)', request: ({ gateway }) => gateway.admin('POST', '/api-keys/key_DOESNOTEXIST/revoke') },
  { type: 'operator_token_not_found', how: 'revoking an unknown operator token', request: ({ gateway }) => gateway.admin('POST', '/operator-tokens/opt_DOESNOTEXIST/revoke') },
  { type: 'webhook_delivery_not_found', how: 'an unknown delivery (operator)', request: ({ gateway }) => gateway.admin('GET', '/webhook-deliveries/dlv_DOESNOTEXIST') },
  {
    type: 'message_not_queued',
    how: 'cancelling a sent message',
    request: async ({ gateway, ws }) => {
      const msgId = await queueOne(gateway, ws);
      await setMessageStatus(gateway, msgId, 'sent');
      return gateway.request('POST', `/api/v1/messages/${msgId}/cancel`, { key: ws.apiKey });
    },
  },
  {
    type: 'sender_account_taken',
    how: "connecting another workspace's sender account (operator)",
    request: async ({ gateway, ws }) => {
      const other = await seedWorkspace(gateway);
      return gateway.admin('PUT', `/workspaces/${other.workspaceId}/sender-accounts/${ws.oaId}?verify=false`, { name: 'x', daily_quota: 1, app_id: 'a', app_secret: 's', refresh_token: 'r' });
    },
  },
  {
    type: 'platform_unavailable',
    how: 'connecting a sender account while the platform cannot be reached (operator)',
    request: async ({ gateway, ws }) =>
      gateway.admin('PUT', `/workspaces/${ws.workspaceId}/sender-accounts/oa${unique('unreachable')}`, { name: 'x', daily_quota: 1, app_id: 'a', app_secret: 's', refresh_token: 'r' }),
  },
  {
    type: 'master_key_mismatch',
    how: 'a master key rotation to a key the answering process does not hold as its current one (operator)',
    request: ({ gateway }) => gateway.admin('POST', '/master-key/rotation', { master_key_id: '0123456789abcdef' }),
  },
  {
    type: 'template_taken',
    how: "registering another workspace's template id (operator)",
    request: async ({ gateway, ws }) => {
      const other = await seedWorkspace(gateway);
      return gateway.admin('PUT', `/workspaces/${other.workspaceId}/templates/${ws.templateId}?verify=false`, {
        name: 'x',
        status: 'ENABLE',
        template_type: 1,
        oa_id: other.oaId,
        preview_url: 'https://example.com/x',
        price: 1,
        params: [],
      });
    },
  },
  {
    type: 'payload_too_large',
    how: 'a body over 1 MiB',
    request: ({ gateway, ws }) =>
      gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody: JSON.stringify({ pad: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } }),
  },
  { type: 'uri_too_long', how: 'a msg_id of 200 characters', request: ({ gateway, ws }) => gateway.request('GET', `/api/v1/messages/${'a'.repeat(200)}`, { key: ws.apiKey }) },
  {
    type: 'uri_too_long',
    how: 'a delivery id of 200 characters (operator)',
    request: ({ gateway }) => gateway.admin('POST', `/webhook-deliveries/${'d'.repeat(200)}/redeliver`),
  },
  {
    type: 'unsupported_media_type',
    how: 'a text/plain body',
    request: ({ gateway, ws }) => gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody: 'hello', headers: { 'content-type': 'text/plain' } }),
  },
  {
    type: 'expectation_failed',
    how: 'Expect: something other than 100-continue',
    request: ({ gateway, ws }) => rawHttp(gateway.url, requestHead('GET', '/api/v1/oas', { Authorization: `Bearer ${ws.apiKey}`, Expect: 'gold' })),
  },
  {
    type: 'idempotency_key_reused',
    how: 'one Idempotency-Key for two different sends',
    request: async (context) => {
      const key = unique('idem');
      expect((await send(context, { tracking_id: 'first' }, { 'idempotency-key': key })).status).toBe(202);
      return send(context, { tracking_id: 'second' }, { 'idempotency-key': key });
    },
  },
  {
    type: 'rate_limited',
    how: 'a third quick request of a 1 request/s key',
    request: async ({ gateway, ws }) => {
      const slow = await createKey(gateway, ws.workspaceId, ['templates:read'], { rate_limit_per_second: 1 });
      await gateway.request('GET', '/api/v1/oas', { key: slow.key });
      await gateway.request('GET', '/api/v1/oas', { key: slow.key });
      return gateway.request('GET', '/api/v1/oas', { key: slow.key });
    },
  },
  {
    type: 'headers_too_large',
    how: 'a 20 kB header',
    request: ({ gateway, ws }) => rawHttp(gateway.url, requestHead('GET', '/api/v1/oas', { Authorization: `Bearer ${ws.apiKey}`, 'X-Padding': 'p'.repeat(20_000) })),
  },
  { type: 'headers_too_large', how: 'a 20 kB path', request: ({ gateway }) => rawHttp(gateway.url, requestHead('GET', `/api/v1/${'p'.repeat(20_000)}`)) },
  {
    type: 'invalid_template_data',
    how: 'a batch recipient missing a required param',
    recipient: true,
    request: ({ gateway, ws }) => gateway.request('POST', '/api/v1/messages/batch', { key: ws.apiKey, body: { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: { name: 'A' } }] } }),
  },
  {
    type: 'missing_phone',
    how: 'a batch recipient without phone',
    recipient: true,
    request: ({ gateway, ws }) => gateway.request('POST', '/api/v1/messages/batch', { key: ws.apiKey, body: { template_id: ws.templateId, recipients: [{ template_data: VALID_DATA }] } }),
  },
  {
    type: 'rsa_phone_invalid',
    how: 'an RSA recipient whose rsa_phone is not base64',
    recipient: true,
    request: ({ gateway, ws }) => gateway.request('POST', '/api/v1/messages/rsa', { key: ws.apiKey, body: { template_id: ws.templateId, recipients: [{ rsa_phone: 'not base64!', template_data: VALID_DATA }] } }),
  },
  {
    type: 'daily_quota_exceeded',
    how: 'a batch recipient past the daily quota',
    recipient: true,
    request: async ({ gateway }) => {
      const ws = await seedWorkspace(gateway, { dailyQuota: 0 });
      return gateway.request('POST', '/api/v1/messages/batch', { key: ws.apiKey, body: { template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }] } });
    },
  },
  {
    type: 'rsa_phone_invalid',
    how: 'an RSA recipient whose ciphertext has the wrong length',
    recipient: true,
    request: ({ gateway, ws }) => gateway.request('POST', '/api/v1/messages/rsa', { key: ws.apiKey, body: { template_id: ws.templateId, recipients: [{ rsa_phone: rsaCiphertext(100), template_data: VALID_DATA }] } }),
  },
];

/** Types no row above provokes, and where they are provoked instead (or why they cannot be). */
const PROVOKED_ELSEWHERE: Partial<Record<ErrorType, string>> = {
  idempotency_key_in_flight: 'needs two requests with one key at the same moment: test/durability/races.test.ts',
  webhook_delivery_pending: 'needs a delivery report on its way to a receiver: test/webhooks/operator.test.ts',
  invalid_webhook_url: 'needs a console session: test/console/api-keys.test.ts',
  invalid_credentials: 'console sign-in: test/console/session.test.ts',
  invitation_not_found: 'console invitations: test/console/session.test.ts and test/operator/console-users.test.ts',
  csrf_failed: 'needs a console session: every console change in test/console/security.test.ts',
  forbidden_role: 'needs a console session: every console route in test/console/security.test.ts',
  console_user_not_found: 'needs a console session: test/console/team.test.ts',
  console_user_taken: 'needs a console session or an invitation: test/console/team.test.ts',
  last_owner: 'needs a console session: test/console/team.test.ts',
  webhook_delivery_not_redeliverable: 'needs a failed delivery report of a revoked key: test/webhooks/operator.test.ts',
  master_key_rotation_incomplete: 'needs a stored secret under neither of the master keys: test/operator/master-key-rotation.test.ts',
  request_timeout: "Node's request timeout is minutes long; the answer is the same raw envelope as headers_too_large",
  internal_error: 'only an unexpected failure inside the gateway produces it',
  sender_account_refused: 'needs a platform that refuses the credentials: test/operator/platform-checks.test.ts',
  sender_account_changed:
    "needs another request to connect a sender account and disconnect it again between two database reads of a reconnect's check; nothing outside the process can time that (services/admin/sender-accounts.ts, failedCheck)",
  template_refused: 'needs a platform that does not know the template: test/operator/platform-checks.test.ts',
  service_unavailable:
    'only a gateway that is shutting down or has lost its store answers it (test/durability/crash.test.ts), or one asked for a second backup while it takes one (test/durability/backup.test.ts)',
  insufficient_disk_space: 'needs a file system with less free space than the database: test/durability/backup.test.ts and src/store/sqlite-backup.test.ts',
};

describe('error catalogue coverage', () => {
  it('provokes every catalogued type over HTTP here, or names where it is provoked', () => {
    const provoked = new Set(PROVOCATIONS.map((row) => row.type));
    const unaccounted = ERROR_TYPES.filter((type) => !provoked.has(type) && PROVOKED_ELSEWHERE[type] === undefined);
    expect(unaccounted).toEqual([]);
    expect(Object.keys(PROVOKED_ELSEWHERE).filter((type) => provoked.has(type as ErrorType))).toEqual([]);
  });

  it('provokes per recipient exactly the types the catalogue gives a recipient form, and those only per recipient there', () => {
    const recipientOf = (type: ErrorType): string | undefined => (ERROR_CATALOGUE[type] as { recipient?: string }).recipient;
    const recipientRows = new Set(PROVOCATIONS.filter((row) => row.recipient).map((row) => row.type));
    expect([...recipientRows].sort()).toEqual(ERROR_TYPES.filter((type) => recipientOf(type) !== undefined).sort());
    const wholeRequestRows = new Set(PROVOCATIONS.filter((row) => !row.recipient).map((row) => row.type));
    expect(ERROR_TYPES.filter((type) => recipientOf(type) === 'only' && wholeRequestRows.has(type))).toEqual([]);
  });
});

describe.each(STORE_KINDS)('every error type over HTTP (%s)', (kind) => {
  let context: Context;

  beforeAll(async () => {
    const gateway = await startTestGateway(kind);
    context = { gateway, ws: await seedWorkspace(gateway) };
  });
  afterAll(async () => context?.gateway.close());

  it.each(PROVOCATIONS.map((row) => [row.how, row.type, row] as const))('%s → %s', async (_how, type, row) => {
    const response = await row.request(context);
    if (row.recipient) {
      expect(response.status, response.text).toBe(202);
      expect(response.body.results[0].error).toMatch(new RegExp(`^${type}: \\S`));
    } else {
      expectError(response, type);
    }
  });
});
