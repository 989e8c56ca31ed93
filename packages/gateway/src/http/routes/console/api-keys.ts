import { Type } from 'typebox';
import { changeConsoleApiKey, createConsoleApiKey, listConsoleApiKeys, revokeConsoleApiKey } from '../../../services/console/api-keys.ts';
import { sendTestReport } from '../../../services/console/test-report.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { JSON_BODY_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE, EXAMPLE_DELIVERY_REPORT } from '../../openapi/example-data.ts';
import { presentConsoleApiKey, presentConsoleApiKeyList, presentCreatedConsoleApiKey, presentTestReport } from '../../presenters/console-api-keys.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { CONSOLE_CHANGE_ERRORS, CONSOLE_READ_ERRORS, ConsoleApiKeySchema, ConsoleScopeSchema, TestReportSchema, WebhookUrlSchema } from './access-schemas.ts';

const tags = ['Console'];
const KeyIdParams = Type.Object({ id: Type.String({ description: 'The key id (key_…)' }) });
const KEY_ERRORS = ['api_key_not_found', ...PATH_PARAMETER_ERRORS] as const;

const KEY_VIEW = {
  id: EXAMPLE.apiKeyId,
  name: 'Website bán hàng',
  key_prefix: EXAMPLE.apiKeyPrefix,
  scopes: ['messages:send', 'messages:read', 'templates:read'],
  webhook_url: EXAMPLE.webhookUrl,
  created_at: '2026-11-20T03:05:44.019Z',
  revoked_at: null,
  last_used_at: '2026-11-24T02:15:30.125Z',
};

/** The signed-in workspace's API keys: list, create, rename or re-address, revoke, test the webhook. */
export function registerConsoleApiKeys(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/api-keys',
    {
      schema: {
        tags,
        operationId: 'consoleListApiKeys',
        summary: "The workspace's API keys, revoked ones included, with when each was last used",
        response: { 200: Type.Object({ api_keys: Type.Array(ConsoleApiKeySchema) }) },
        'x-responses': { 200: { description: 'Every key, oldest first; never the keys themselves.', examples: { keys: { summary: 'One key', value: { api_keys: [KEY_VIEW] } } } } },
        'x-error-types': CONSOLE_READ_ERRORS,
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentConsoleApiKeyList(await listConsoleApiKeys({ ctx: consoleContextOf(request, route), input: {} })),
  );

  app.post(
    '/console/api/api-keys',
    {
      schema: {
        tags,
        operationId: 'consoleCreateApiKey',
        summary: 'Create an API key (the key is in this response only)',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 100 }), scopes: Type.Array(ConsoleScopeSchema, { minItems: 1, maxItems: 3 }), webhook_url: Type.Optional(Nullable(WebhookUrlSchema)) },
          { additionalProperties: false },
        ),
        response: { 201: Type.Intersect([ConsoleApiKeySchema, Type.Object({ key: Type.String() })]) },
        'x-request-examples': { website: { summary: 'A key for the shop website, with delivery reports', value: { name: KEY_VIEW.name, scopes: KEY_VIEW.scopes, webhook_url: EXAMPLE.webhookUrl } } },
        'x-responses': { 201: { description: 'Created. `key` is shown here only: copy it now.', examples: { created: { summary: 'Created', value: { ...KEY_VIEW, last_used_at: null, key: EXAMPLE.apiKey } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, 'invalid_webhook_url', ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request, reply) => {
      const created = await createConsoleApiKey({ ctx: consoleContextOf(request, route), input: request.body });
      return reply.code(201).send(presentCreatedConsoleApiKey(created));
    },
  );

  app.patch(
    '/console/api/api-keys/:id',
    {
      schema: {
        tags,
        operationId: 'consoleUpdateApiKey',
        summary: "Rename a key, or set or remove (null) its webhook URL",
        description: "Pending delivery reports of the key follow a new URL; removing the URL cancels them.",
        params: KeyIdParams,
        body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), webhook_url: Type.Optional(Nullable(WebhookUrlSchema)) }, { additionalProperties: false }),
        response: { 200: ConsoleApiKeySchema },
        'x-parameter-examples': { id: EXAMPLE.apiKeyId },
        'x-request-examples': {
          webhook: { summary: 'Move the delivery reports to a new URL', value: { webhook_url: 'https://api.hoasen.vn/tms/delivery' } },
          remove: { summary: 'Stop delivery reports', value: { webhook_url: null } },
        },
        'x-responses': { 200: { description: 'The key as changed.', examples: { changed: { summary: 'New webhook URL', value: { ...KEY_VIEW, webhook_url: 'https://api.hoasen.vn/tms/delivery' } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, 'invalid_webhook_url', ...KEY_ERRORS, ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request) => presentConsoleApiKey(await changeConsoleApiKey({ ctx: consoleContextOf(request, route), input: { ...request.body, id: request.params.id } })),
  );

  app.post(
    '/console/api/api-keys/:id/revoke',
    {
      schema: {
        tags,
        operationId: 'consoleRevokeApiKey',
        summary: 'Revoke a key (refused everywhere within seconds; its pending reports are cancelled)',
        params: KeyIdParams,
        response: { 200: ConsoleApiKeySchema },
        'x-parameter-examples': { id: EXAMPLE.apiKeyId },
        'x-responses': { 200: { description: 'The key, revoked.', examples: { revoked: { summary: 'Revoked', value: { ...KEY_VIEW, revoked_at: '2026-11-24T04:00:00.000Z' } } } } },
        'x-error-types': [...KEY_ERRORS, ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request) => presentConsoleApiKey(await revokeConsoleApiKey({ ctx: consoleContextOf(request, route), input: { id: request.params.id } })),
  );

  app.post(
    '/console/api/api-keys/:id/test-report',
    {
      schema: {
        tags,
        operationId: 'consoleSendTestReport',
        summary: "Post a signed sample delivery report to the key's webhook URL",
        description: 'Built and signed like a real report (`msg_id` starting `msg_test_`), posted once with the same time limit; not stored, not retried.',
        params: KeyIdParams,
        response: { 200: TestReportSchema },
        'x-parameter-examples': { id: EXAMPLE.apiKeyId },
        'x-responses': {
          200: {
            description: "What the receiver answered (a refusal too is a 200 here: see status_code and error).",
            examples: {
              accepted: {
                summary: 'The receiver answered 200',
                value: { url: EXAMPLE.webhookUrl, status_code: 200, latency_ms: 84, response_body: 'ok', error: null, request_body: JSON.stringify({ ...EXAMPLE_DELIVERY_REPORT, message_id: 'msg_test_01KAT3M5Q8ZJ7Y4V2N6R9C1D0E' }) },
              },
            },
          },
        },
        'x-error-types': ['invalid_request', ...KEY_ERRORS, ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request) => presentTestReport(await sendTestReport({ ctx: consoleContextOf(request, route), input: { id: request.params.id } })),
  );
}
