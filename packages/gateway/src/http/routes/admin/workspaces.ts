import { Type } from 'typebox';
import { changeWorkspace, createWorkspace, getWorkspace, listWorkspaces, readWallet, topUp } from '../../../services/admin.ts';
import type { App, RouteDependencies } from '../../route-support.ts';
import { Nullable, errorResponses } from '../../schemas.ts';
import { LedgerEntrySchema, Paging, WorkspaceIdParams, WorkspaceSchema } from './admin-schemas.ts';

const tags = ['operator'];

export function registerAdminWorkspaces(app: App, route: RouteDependencies): void {
  const { admin } = route;
  app.post(
    '/admin/v1/workspaces',
    {
      schema: {
        tags,
        summary: 'Create a workspace',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), message_cap: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))) }, { additionalProperties: false }),
        response: { 201: WorkspaceSchema, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => reply.code(201).send(await createWorkspace(admin, request.body)),
  );
  app.get(
    '/admin/v1/workspaces',
    {
      schema: {
        tags,
        summary: 'List workspaces, newest first',
        querystring: Paging,
        response: { 200: Type.Object({ workspaces: Type.Array(WorkspaceSchema), count: Type.Integer() }), ...errorResponses(400, 401) },
      },
    },
    async (request) => listWorkspaces(admin, request.query),
  );
  app.get(
    '/admin/v1/workspaces/:id',
    { schema: { tags, summary: 'Read a workspace', params: WorkspaceIdParams, response: { 200: WorkspaceSchema, ...errorResponses(401, 404) } } },
    async (request) => getWorkspace(admin, request.params.id),
  );
  for (const [action, status] of [['suspend', 'suspended'], ['resume', 'active']] as const) {
    app.post(
      `/admin/v1/workspaces/:id/${action}`,
      {
        schema: {
          tags,
          summary: action === 'suspend' ? 'Suspend a workspace (its keys get 403 within seconds)' : 'Resume a suspended workspace',
          params: WorkspaceIdParams,
          response: { 200: WorkspaceSchema, ...errorResponses(401, 404) },
        },
      },
      async (request) => changeWorkspace(admin, request.params.id, { status }),
    );
  }
  app.put(
    '/admin/v1/workspaces/:id/message-cap',
    {
      schema: {
        tags,
        summary: 'Set the account-level message cap (null removes it)',
        params: WorkspaceIdParams,
        body: Type.Object({ message_cap: Nullable(Type.Integer({ minimum: 0 })) }, { additionalProperties: false }),
        response: { 200: WorkspaceSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => changeWorkspace(admin, request.params.id, { message_cap: request.body.message_cap }),
  );
  app.post(
    '/admin/v1/workspaces/:id/wallet/top-ups',
    {
      schema: {
        tags,
        summary: 'Top up the wallet (VND)',
        params: WorkspaceIdParams,
        body: Type.Object({ amount: Type.Integer({ minimum: 1 }), note: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false }),
        response: { 201: Type.Object({ balance: Type.Integer(), entry: LedgerEntrySchema }), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await topUp(admin, request.params.id, request.body)),
  );
  app.get(
    '/admin/v1/workspaces/:id/wallet',
    {
      schema: {
        tags,
        summary: 'Read the wallet balance and its ledger, newest first',
        params: WorkspaceIdParams,
        querystring: Paging,
        response: {
          200: Type.Object({ workspace_id: Type.String(), balance: Type.Integer(), ledger: Type.Array(LedgerEntrySchema), count: Type.Integer() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => readWallet(admin, request.params.id, request.query),
  );
}
