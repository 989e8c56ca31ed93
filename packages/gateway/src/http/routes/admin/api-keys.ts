import { Type } from 'typebox';
import { changeApiKey, createApiKey, listApiKeys } from '../../../services/admin/api-keys.ts';
import { presentApiKey, presentApiKeyList, presentCreatedApiKey } from '../../presenters/api-keys.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { MAX_RATE_LIMIT_PER_SECOND } from '../../../lib/limits.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { API_KEY } from '../../openapi/operator-examples.ts';
import { ApiKeySchema, ScopeSchema, WorkspaceIdParams } from './admin-schemas.ts';

const tags = ['API keys'];
const WebhookUrl = Type.String({ maxLength: 2048, description: 'Delivery-report URL, http(s); private addresses refused unless TMS_WEBHOOK_ALLOW_PRIVATE' });

export function registerAdminApiKeys(app: App, route: RouteDependencies): void {
  app.post(
    '/admin/v1/workspaces/:id/api-keys',
    {
      schema: {
        tags,
        operationId: 'createApiKey',
        summary: 'Create an API key (the key is in this response only)',
        params: WorkspaceIdParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            scopes: Type.Array(ScopeSchema, { minItems: 1 }),
            webhook_url: Type.Optional(Nullable(WebhookUrl)),
            rate_limit_per_second: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT_PER_SECOND }))),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Intersect([ApiKeySchema, Type.Object({ key: Type.String() })]) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-request-examples': {
          website: {
            summary: 'A key for the shop website, with delivery reports',
            value: { name: API_KEY.name, scopes: API_KEY.scopes, webhook_url: EXAMPLE.webhookUrl },
          },
          reporting: { summary: 'A read-only key limited to 5 requests per second', value: { name: 'Báo cáo nội bộ', scopes: ['messages:read'], rate_limit_per_second: 5 } },
        },
        'x-responses': {
          201: { description: 'Created. `key` is shown here only: hand it over now.', examples: { created: { summary: 'Created', value: { ...API_KEY, key: EXAMPLE.apiKey } } } },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request, reply) => {
      const created = await createApiKey({ ctx: operatorContextOf(request, route), input: { ...request.body, workspaceId: request.params.id } });
      return reply.code(201).send(presentCreatedApiKey(created));
    },
  );
  app.get(
    '/admin/v1/workspaces/:id/api-keys',
    {
      schema: {
        tags,
        operationId: 'listApiKeys',
        summary: "List a workspace's API keys (never the secrets)",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ api_keys: Type.Array(ApiKeySchema), count: Type.Integer() }) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-responses': {
          200: {
            description: "The workspace's keys, revoked ones included.",
            examples: {
              keys: {
                summary: 'A live key and a revoked one',
                value: {
                  api_keys: [
                    API_KEY,
                    { ...API_KEY, id: 'key_01KAT30A1B2C3D4E5F6G7H8J9M', name: 'Máy POS cũ', key_prefix: 'tms_live_Vb81Qz', webhook_url: null, revoked_at: '2026-11-22T08:00:00.000Z' },
                  ],
                  count: 2,
                },
              },
            },
          },
        },
        'x-error-types': ['workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentApiKeyList(await listApiKeys({ ctx: operatorContextOf(request, route), input: { workspaceId: request.params.id } })),
  );
  app.post(
    '/admin/v1/api-keys/:id/revoke',
    {
      schema: {
        tags,
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key (401 everywhere within 5 s)',
        description: 'Its pending delivery reports are cancelled. Revoking a revoked key changes nothing.',
        params: WorkspaceIdParams,
        response: { 200: ApiKeySchema },
        'x-parameter-examples': { id: EXAMPLE.apiKeyId },
        'x-responses': { 200: { description: 'The key, revoked.', examples: { revoked: { summary: 'Revoked', value: { ...API_KEY, revoked_at: '2026-11-24T04:00:00.000Z' } } } } },
        'x-error-types': ['api_key_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentApiKey(await changeApiKey({ ctx: operatorContextOf(request, route), input: { id: request.params.id, revoke: true } })),
  );
  app.patch(
    '/admin/v1/api-keys/:id',
    {
      schema: {
        tags,
        operationId: 'updateApiKey',
        summary: "Change a key's webhook URL or rate limit",
        params: WorkspaceIdParams,
        body: Type.Object(
          { webhook_url: Type.Optional(Nullable(WebhookUrl)), rate_limit_per_second: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT_PER_SECOND }))) },
          { additionalProperties: false },
        ),
        response: { 200: ApiKeySchema },
        'x-parameter-examples': { id: EXAMPLE.apiKeyId },
        'x-request-examples': {
          webhook: { summary: 'Move the delivery reports to a new URL', value: { webhook_url: 'https://api.hoasen.vn/tms/delivery' } },
          limit: { summary: 'Allow 200 requests per second', value: { rate_limit_per_second: 200 } },
        },
        'x-responses': {
          200: { description: 'The key as changed.', examples: { changed: { summary: 'New webhook URL', value: { ...API_KEY, webhook_url: 'https://api.hoasen.vn/tms/delivery' } } } },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'api_key_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentApiKey(await changeApiKey({ ctx: operatorContextOf(request, route), input: { ...request.body, id: request.params.id } })),
  );
}
