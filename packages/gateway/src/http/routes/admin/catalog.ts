import { Type } from 'typebox';
import { connectSenderAccount, listSenderAccounts, listWorkspaceTemplates, registerTemplate } from '../../../services/admin.ts';
import { AccessTokens } from '../../../services/platform-tokens.ts';
import { syncTemplates } from '../../../services/template-sync.ts';
import type { App, RouteDependencies } from '../../route-support.ts';
import { Nullable, errorResponses } from '../../schemas.ts';
import { TemplateSchema, TemplateStatusSchema } from '../templates/list.ts';
import { SenderAccountSchema, TemplateSyncResultSchema, WorkspaceIdParams } from './admin-schemas.ts';

const tags = ['operator'];

export function registerAdminCatalog(app: App, route: RouteDependencies): void {
  const { admin } = route;
  app.put(
    '/admin/v1/workspaces/:id/sender-accounts/:oa_id',
    {
      schema: {
        tags,
        summary: 'Connect (or update) a sender account with its ZNS credentials',
        params: Type.Object({ id: Type.String(), oa_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            default_mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('hashphone')])),
            daily_quota: Type.Integer({ minimum: 0 }),
            app_id: Type.String({ minLength: 1 }),
            app_secret: Type.String({ minLength: 1 }),
            refresh_token: Type.String({ minLength: 1 }),
            oa_secret_key: Type.Optional(Nullable(Type.String({ minLength: 1, description: 'OA Secret Key of the webhook settings (verifies platform events)' }))),
            rsa_public_key: Type.Optional(Nullable(Type.String())),
          },
          { additionalProperties: false },
        ),
        response: { 200: SenderAccountSchema, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => connectSenderAccount(admin, request.params.id, { ...request.body, oa_id: request.params.oa_id }),
  );
  app.get(
    '/admin/v1/workspaces/:id/sender-accounts',
    {
      schema: {
        tags,
        summary: "List a workspace's sender accounts (never the secrets)",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ sender_accounts: Type.Array(SenderAccountSchema), count: Type.Integer() }), ...errorResponses(401, 404) },
      },
    },
    async (request) => listSenderAccounts(admin, request.params.id),
  );
  app.put(
    '/admin/v1/workspaces/:id/templates/:template_id',
    {
      schema: {
        tags,
        summary: 'Register or update a template with its params and price',
        params: Type.Object({ id: Type.String(), template_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          {
            name: Type.String({ minLength: 1 }),
            status: TemplateStatusSchema,
            template_type: Type.Integer({ minimum: 0 }),
            oa_id: Type.String({ minLength: 1 }),
            preview_url: Type.Optional(Type.String()),
            price: Type.Integer({ minimum: 0, description: 'VND per message' }),
            params: Type.Array(
              Type.Object(
                {
                  name: Type.String({ minLength: 1 }),
                  type: Type.String({ default: 'STRING' }),
                  required: Type.Boolean(),
                  max_length: Type.Integer({ minimum: 0 }),
                  min_length: Type.Integer({ minimum: 0 }),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Intersect([TemplateSchema, Type.Object({ workspace_id: Type.String() })]), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => registerTemplate(admin, request.params.id, { ...request.body, template_id: request.params.template_id }),
  );
  app.get(
    '/admin/v1/workspaces/:id/templates',
    {
      schema: {
        tags,
        summary: "List a workspace's templates",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ templates: Type.Array(TemplateSchema), count: Type.Integer() }), ...errorResponses(401, 404) },
      },
    },
    async (request) => listWorkspaceTemplates(admin, request.params.id),
  );
  const tokens = route.accessTokens ?? new AccessTokens(route.deps);
  app.post(
    '/admin/v1/workspaces/:id/templates/sync',
    {
      schema: {
        tags,
        summary: "Sync a workspace's templates from the platform now",
        description:
          'For each connected sender account (or the one given): lists its templates on ZNS, reads each one, and creates or updates ours with ' +
          "the platform's name, status, params and preview. A template the operator registered keeps the operator's price; one first seen " +
          "here gets the platform's. An account that cannot be synced (no token, platform unavailable) reports it in its error and is left unchanged.",
        params: WorkspaceIdParams,
        body: Type.Object({ oa_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
        response: { 200: TemplateSyncResultSchema, ...errorResponses(400, 401, 404) },
      },
      // The body is optional: a bodiless POST syncs every connected account.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const accounts = await syncTemplates(route.deps, tokens, request.params.id, request.body.oa_id);
      return { workspace_id: request.params.id, accounts, count: accounts.length };
    },
  );
}
