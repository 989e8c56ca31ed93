import { Type } from 'typebox';
import { changeApiKey, createApiKey, listApiKeys } from '../../../services/admin.ts';
import type { App, RouteDependencies } from '../../route-support.ts';
import { Nullable, errorResponses } from '../../schemas.ts';
import { ApiKeySchema, ScopeSchema, WorkspaceIdParams } from './admin-schemas.ts';

const tags = ['operator'];
const WebhookUrl = Type.String({ maxLength: 2048, description: 'Delivery-report URL, http(s); private addresses refused unless TMS_WEBHOOK_ALLOW_PRIVATE' });

export function registerAdminApiKeys(app: App, route: RouteDependencies): void {
  const { admin } = route;
  app.post(
    '/admin/v1/workspaces/:id/api-keys',
    {
      schema: {
        tags,
        summary: 'Create an API key (the key is in this response only)',
        params: WorkspaceIdParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            scopes: Type.Array(ScopeSchema, { minItems: 1 }),
            webhook_url: Type.Optional(Nullable(WebhookUrl)),
            rate_limit_per_second: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Intersect([ApiKeySchema, Type.Object({ key: Type.String() })]), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await createApiKey(admin, request.params.id, request.body)),
  );
  app.get(
    '/admin/v1/workspaces/:id/api-keys',
    {
      schema: {
        tags,
        summary: "List a workspace's API keys (never the secrets)",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ api_keys: Type.Array(ApiKeySchema), count: Type.Integer() }), ...errorResponses(401, 404) },
      },
    },
    async (request) => listApiKeys(admin, request.params.id),
  );
  app.post(
    '/admin/v1/api-keys/:id/revoke',
    { schema: { tags, summary: 'Revoke an API key (401 everywhere within 5 s)', params: WorkspaceIdParams, response: { 200: ApiKeySchema, ...errorResponses(401, 404) } } },
    async (request) => changeApiKey(admin, request.params.id, { revoke: true }),
  );
  app.patch(
    '/admin/v1/api-keys/:id',
    {
      schema: {
        tags,
        summary: "Change a key's webhook URL or rate limit",
        params: WorkspaceIdParams,
        body: Type.Object(
          { webhook_url: Type.Optional(Nullable(WebhookUrl)), rate_limit_per_second: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))) },
          { additionalProperties: false },
        ),
        response: { 200: ApiKeySchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => changeApiKey(admin, request.params.id, request.body),
  );
}
