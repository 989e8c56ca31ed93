import { Type } from 'typebox';
import { connectSenderAccount, disconnectSenderAccount, listSenderAccounts, reconnectSenderAccount } from '../../../services/admin/sender-accounts.ts';
import { listWorkspaceTemplates, registerTemplate } from '../../../services/admin/templates.ts';
import { syncTemplates } from '../../../services/template-sync.ts';
import { presentRegisteredTemplate, presentTemplateList, presentTemplateSync } from '../../presenters/admin-templates.ts';
import { presentSenderAccount, presentSenderAccountList } from '../../presenters/sender-accounts.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { MAX_COUNT, MAX_INT32, MAX_PRICE_VND } from '../../../lib/limits.ts';
import { Nullable } from '../../schemas.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE, ORDER_TEMPLATE, OTP_TEMPLATE } from '../../openapi/example-data.ts';
import { SENDER_ACCOUNT } from '../../openapi/operator-examples.ts';
import { TemplateSchema, TemplateStatusSchema } from '../templates/list.ts';
import { SenderAccountSchema, TemplateSyncResultSchema, WorkspaceIdParams } from './admin-schemas.ts';

const tags = ['Sender accounts and templates'];

/** `?verify=false`: store without asking the platform first (set-up where it cannot be reached). */
const VerifyQuery = Type.Object(
  {
    verify: Type.Optional(
      Type.Boolean({ default: true, description: 'Check with the platform before storing (default). `false` stores without asking it: for set-up where it cannot be reached.' }),
    ),
  },
  { additionalProperties: false },
);
const VERIFY_ERRORS = ['platform_unavailable'] as const;
const WORKSPACE_ERRORS = ['workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS] as const;

export function registerAdminCatalog(app: App, route: RouteDependencies): void {
  app.put(
    '/admin/v1/workspaces/:id/sender-accounts/:oa_id',
    {
      schema: {
        tags,
        operationId: 'connectSenderAccount',
        summary: 'Connect (or update) a sender account with its ZNS credentials',
        description:
          'The gateway first checks the credentials with the platform: a token refresh. The refresh token is single-use, so what is stored is the new refresh token and access token the platform issued for it. A refusal answers 422 sender_account_refused with the platform\'s code and reason, and stores nothing.',
        params: Type.Object({ id: Type.String(), oa_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: VerifyQuery,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            default_mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('hashphone')])),
            daily_quota: Type.Integer({ minimum: 0, maximum: MAX_COUNT }),
            app_id: Type.String({ minLength: 1 }),
            app_secret: Type.String({ minLength: 1 }),
            refresh_token: Type.String({ minLength: 1 }),
            oa_secret_key: Type.Optional(Nullable(Type.String({ minLength: 1, description: 'OA Secret Key of the webhook settings (verifies platform events)' }))),
            rsa_public_key: Type.Optional(Nullable(Type.String())),
          },
          { additionalProperties: false },
        ),
        response: { 200: SenderAccountSchema },
        'x-parameter-examples': { id: EXAMPLE.workspaceId, oa_id: EXAMPLE.oaId },
        'x-request-examples': {
          connect: {
            summary: 'Connect the shop OA with its Zalo app credentials',
            value: {
              name: EXAMPLE.oaName,
              default_mode: 'plain',
              daily_quota: 5000,
              app_id: SENDER_ACCOUNT.app_id,
              app_secret: 'Qm9hU2VuQXBwU2VjcmV0MjAyNg',
              refresh_token: 'kR7pX2vN9mQ4tL8wZ3cB6yH1fJ5dG0sA',
              oa_secret_key: 'hS4nV8qL2pW6tY0rE3uI7oK1mN5bZ9cX',
            },
          },
        },
        'x-responses': { 200: { description: 'The sender account, connected (its secrets are never shown).', examples: { connected: { summary: 'Connected', value: SENDER_ACCOUNT } } } },
        'x-error-types': [...JSON_BODY_ERRORS, 'sender_account_taken', 'sender_account_refused', ...VERIFY_ERRORS, ...WORKSPACE_ERRORS],
      },
    },
    async (request) => {
      const input = { ...request.body, oa_id: request.params.oa_id, workspaceId: request.params.id, verify: request.query.verify };
      return presentSenderAccount(await connectSenderAccount({ ctx: operatorContextOf(request, route), input }));
    },
  );
  for (const [action, status] of [['disconnect', 'disconnected'], ['reconnect', 'connected']] as const) {
    app.post(
      `/admin/v1/workspaces/:id/sender-accounts/:oa_id/${action}`,
      {
        schema: {
          tags,
          operationId: action === 'disconnect' ? 'disconnectSenderAccount' : 'reconnectSenderAccount',
          summary:
            action === 'disconnect'
              ? 'Disconnect a sender account: new sends naming it are refused, its queued messages fail with a refund'
              : 'Reconnect a disconnected sender account with the credentials it has',
          description:
            action === 'disconnect'
              ? 'Its credentials stay, so reconnecting resumes it. Disconnecting a disconnected account changes nothing.'
              : 'The platform is asked first whether it accepts the stored credentials (an access token, refreshed if stale, that the quota call accepts). A refused refresh token answers 422 sender_account_refused and leaves the account needing a new one (relogin_required); a platform that cannot be asked answers 503 platform_unavailable and leaves it disconnected; an account another request changed while it was checked answers 409 sender_account_changed and is left as that request left it. An account that needs a new refresh token is connected again with new credentials instead (400). Reconnecting a connected account changes nothing.',
          params: Type.Object({ id: Type.String(), oa_id: Type.String({ minLength: 1, maxLength: 64 }) }),
          ...(action === 'reconnect' ? { querystring: VerifyQuery } : {}),
          response: { 200: SenderAccountSchema },
          'x-parameter-examples': { id: EXAMPLE.workspaceId, oa_id: EXAMPLE.oaId },
          'x-responses': { 200: { description: `The sender account, now ${status}.`, examples: { [status]: { summary: status, value: { ...SENDER_ACCOUNT, status } } } } },
          'x-error-types': ['invalid_request', 'sender_account_not_found', ...(action === 'reconnect' ? (['sender_account_refused', 'sender_account_changed', ...VERIFY_ERRORS] as const) : []), ...WORKSPACE_ERRORS],
        },
      },
      async (request) => {
        const { verify } = (request.query ?? {}) as { verify?: boolean };
        const input = { workspaceId: request.params.id, oaId: request.params.oa_id, verify };
        const ctx = operatorContextOf(request, route);
        return presentSenderAccount(action === 'disconnect' ? await disconnectSenderAccount({ ctx, input }) : await reconnectSenderAccount({ ctx, input }));
      },
    );
  }
  app.get(
    '/admin/v1/workspaces/:id/sender-accounts',
    {
      schema: {
        tags,
        operationId: 'listSenderAccounts',
        summary: "List a workspace's sender accounts (never the secrets)",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ sender_accounts: Type.Array(SenderAccountSchema), count: Type.Integer() }) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-responses': {
          200: {
            description: "The workspace's sender accounts; `token_problem` says which need the operator.",
            examples: {
              accounts: {
                summary: 'One connected, one that needs a new refresh token',
                value: {
                  sender_accounts: [
                    SENDER_ACCOUNT,
                    {
                      ...SENDER_ACCOUNT,
                      oa_id: '4318269720189301002',
                      name: 'Hoa Sen Chi nhánh Đà Nẵng',
                      daily_quota: 2000,
                      status: 'relogin_required',
                      token_problem: 'The platform refused the refresh token (-124: Invalid refresh token); connect the sender account again with a new refresh token.',
                    },
                  ],
                  count: 2,
                },
              },
            },
          },
        },
        'x-error-types': WORKSPACE_ERRORS,
      },
    },
    async (request) => presentSenderAccountList(await listSenderAccounts({ ctx: operatorContextOf(request, route), input: { workspaceId: request.params.id } })),
  );
  app.put(
    '/admin/v1/workspaces/:id/templates/:template_id',
    {
      schema: {
        tags,
        operationId: 'registerTemplate',
        summary: 'Register or update a template with its params and price',
        description:
          "The gateway first asks the platform for the template's info as the sender account: a template the platform does not know for that account answers 422 template_refused and stores nothing. One it knows is stored with the platform's name, status, params and preview (any given are replaced) and the operator's price and template_type. With `verify=false` nothing is asked, and name, status and params are required.",
        params: Type.Object({ id: Type.String(), template_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: VerifyQuery,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, description: "Required with verify=false; otherwise the platform's" })),
            status: Type.Optional(TemplateStatusSchema),
            template_type: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
            oa_id: Type.String({ minLength: 1 }),
            preview_url: Type.Optional(Type.String()),
            price: Type.Integer({ minimum: 0, maximum: MAX_PRICE_VND, description: 'VND per message, at most 10^9' }),
            params: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    name: Type.String({ minLength: 1 }),
                    type: Type.String({ default: 'STRING' }),
                    required: Type.Boolean(),
                    max_length: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
                    min_length: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
                  },
                  { additionalProperties: false },
                ),
                { description: "Required with verify=false; otherwise the platform's" },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Intersect([TemplateSchema, Type.Object({ workspace_id: Type.String() })]) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId, template_id: EXAMPLE.orderTemplateId },
        'x-request-examples': {
          order: {
            summary: 'The order confirmation at 300 VND per message',
            value: {
              name: ORDER_TEMPLATE.name,
              status: 'ENABLE',
              template_type: 1,
              oa_id: EXAMPLE.oaId,
              preview_url: ORDER_TEMPLATE.preview_url,
              price: EXAMPLE.price,
              params: ORDER_TEMPLATE.params,
            },
          },
        },
        'x-responses': { 200: { description: 'The template as registered.', examples: { registered: { summary: 'Registered', value: { ...ORDER_TEMPLATE, workspace_id: EXAMPLE.workspaceId } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, 'sender_account_not_found', 'sender_account_not_connected', 'template_taken', 'template_refused', ...VERIFY_ERRORS, ...WORKSPACE_ERRORS],
      },
    },
    async (request) => {
      const input = { ...request.body, template_id: request.params.template_id, workspaceId: request.params.id, verify: request.query.verify };
      return presentRegisteredTemplate(await registerTemplate({ ctx: operatorContextOf(request, route), input }));
    },
  );
  app.get(
    '/admin/v1/workspaces/:id/templates',
    {
      schema: {
        tags,
        operationId: 'listWorkspaceTemplates',
        summary: "List a workspace's templates",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ templates: Type.Array(TemplateSchema), count: Type.Integer() }) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-responses': {
          200: { description: "The workspace's templates, whatever their status.", examples: { templates: { summary: 'Two templates', value: { templates: [ORDER_TEMPLATE, OTP_TEMPLATE], count: 2 } } } },
        },
        'x-error-types': WORKSPACE_ERRORS,
      },
    },
    async (request) => presentTemplateList(await listWorkspaceTemplates({ ctx: operatorContextOf(request, route), input: { workspaceId: request.params.id } })),
  );
  app.post(
    '/admin/v1/workspaces/:id/templates/sync',
    {
      schema: {
        tags,
        operationId: 'syncTemplates',
        summary: "Sync a workspace's templates from the platform now",
        description:
          'For each connected sender account (or the one given): lists its templates on ZNS, reads each one, and creates or updates ours with ' +
          "the platform's name, status, params and preview. A template the operator registered keeps the operator's price; one first seen " +
          "here gets the platform's. An account that cannot be synced (no token, platform unavailable) reports it in its error and is left unchanged.",
        params: WorkspaceIdParams,
        body: Type.Object({ oa_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
        response: { 200: TemplateSyncResultSchema },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-optional-body': true,
        'x-request-examples': { one: { summary: 'One sender account (send no body for all of them)', value: { oa_id: EXAMPLE.oaId } } },
        'x-responses': {
          200: {
            description: 'What changed, per sender account. An account that could not be synced carries `error` and was left as it was.',
            examples: {
              synced: {
                summary: 'One template new, one changed',
                value: {
                  workspace_id: EXAMPLE.workspaceId,
                  accounts: [{ oa_id: EXAMPLE.oaId, created: 1, updated: 1, unchanged: 1, failed: [], error: null, skipped: false }],
                  count: 1,
                },
              },
            },
          },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'sender_account_not_found', ...WORKSPACE_ERRORS],
      },
      // The body is optional: a bodiless POST syncs every connected account.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const workspaceId = request.params.id;
      const summaries = await syncTemplates({ ctx: operatorContextOf(request, route), input: { workspaceId, oaId: request.body.oa_id } });
      return presentTemplateSync(workspaceId, summaries);
    },
  );
}
