import { Type } from 'typebox';
import { adjustWallet, MAX_WALLET_NOTE_CHARS, readWallet, topUp } from '../../../services/admin/wallets.ts';
import { changeWorkspace, createWorkspace, getWorkspace, listWorkspaces } from '../../../services/admin/workspaces.ts';
import { presentBalanceChange, presentWallet, presentWorkspace, presentWorkspaceList } from '../../presenters/workspaces.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { ADJUSTMENT_ENTRY, CHARGE_ENTRY, TOP_UP_ENTRY, WORKSPACE } from '../../openapi/operator-examples.ts';
import { MAX_COUNT, MAX_WALLET_BALANCE_VND } from '../../../lib/limits.ts';
import { LedgerEntrySchema, Paging, WorkspaceIdParams, WorkspaceSchema } from './admin-schemas.ts';

const tags = ['Workspaces'];
/** Errors of every route that names a workspace in its path. */
const WORKSPACE_ERRORS = ['workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS] as const;
const workspaceExample = { 'x-parameter-examples': { id: EXAMPLE.workspaceId } };

export function registerAdminWorkspaces(app: App, route: RouteDependencies): void {
  app.post(
    '/admin/v1/workspaces',
    {
      schema: {
        tags,
        operationId: 'createWorkspace',
        summary: 'Create a workspace',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), message_cap: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: MAX_COUNT }))) }, { additionalProperties: false }),
        response: { 201: WorkspaceSchema },
        'x-request-examples': { shop: { summary: 'A shop with a lifetime cap of 100,000 messages', value: { name: EXAMPLE.workspaceName, message_cap: 100_000 } } },
        'x-responses': {
          201: {
            description: 'Created, active, with an empty wallet.',
            examples: { created: { summary: 'Created', value: { ...WORKSPACE, balance: 0, messages_used: 0, created_at: EXAMPLE.createdAt } } },
          },
        },
        'x-error-types': [...JSON_BODY_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request, reply) => {
      const workspace = await createWorkspace({ ctx: operatorContextOf(request, route), input: request.body });
      return reply.code(201).send(presentWorkspace(workspace));
    },
  );
  app.get(
    '/admin/v1/workspaces',
    {
      schema: {
        tags,
        operationId: 'listWorkspaces',
        summary: 'List workspaces, newest first',
        querystring: Paging,
        response: { 200: Type.Object({ workspaces: Type.Array(WorkspaceSchema), count: Type.Integer() }) },
        'x-parameter-examples': { limit: 50, offset: 0 },
        'x-responses': {
          200: {
            description: 'One page of workspaces.',
            examples: {
              page: {
                summary: 'Two workspaces',
                value: {
                  workspaces: [WORKSPACE, { ...WORKSPACE, id: 'ws_01KAT2Z7X4C8V6B2N1M3Q5R7TA', name: 'Nhà thuốc An Khang', status: 'suspended', balance: 12_300, message_cap: null, messages_used: 402 }],
                  count: 2,
                },
              },
            },
          },
        },
        'x-error-types': ['invalid_request', ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentWorkspaceList(await listWorkspaces({ ctx: operatorContextOf(request, route), input: request.query })),
  );
  app.get(
    '/admin/v1/workspaces/:id',
    {
      schema: {
        tags,
        operationId: 'getWorkspace',
        summary: 'Read a workspace',
        params: WorkspaceIdParams,
        response: { 200: WorkspaceSchema },
        ...workspaceExample,
        'x-responses': { 200: { description: 'The workspace.', examples: { workspace: { summary: 'An active workspace', value: WORKSPACE } } } },
        'x-error-types': WORKSPACE_ERRORS,
      },
    },
    async (request) => presentWorkspace(await getWorkspace({ ctx: operatorContextOf(request, route), input: { id: request.params.id } })),
  );
  for (const [action, status] of [['suspend', 'suspended'], ['resume', 'active']] as const) {
    app.post(
      `/admin/v1/workspaces/:id/${action}`,
      {
        schema: {
          tags,
          operationId: action === 'suspend' ? 'suspendWorkspace' : 'resumeWorkspace',
          summary: action === 'suspend' ? 'Suspend a workspace (its keys get 403 within seconds)' : 'Resume a suspended workspace',
          params: WorkspaceIdParams,
          response: { 200: WorkspaceSchema },
          ...workspaceExample,
          'x-responses': {
            200: { description: `The workspace, now ${status}.`, examples: { [status]: { summary: action === 'suspend' ? 'Suspended' : 'Active again', value: { ...WORKSPACE, status } } } },
          },
          'x-error-types': WORKSPACE_ERRORS,
        },
      },
      async (request) => presentWorkspace(await changeWorkspace({ ctx: operatorContextOf(request, route), input: { id: request.params.id, status } })),
    );
  }
  app.put(
    '/admin/v1/workspaces/:id/message-cap',
    {
      schema: {
        tags,
        operationId: 'setMessageCap',
        summary: 'Set the account-level message cap (null removes it)',
        params: WorkspaceIdParams,
        body: Type.Object({ message_cap: Nullable(Type.Integer({ minimum: 0, maximum: MAX_COUNT })) }, { additionalProperties: false }),
        response: { 200: WorkspaceSchema },
        ...workspaceExample,
        'x-request-examples': { raise: { summary: 'Raise the cap to 200,000', value: { message_cap: 200_000 } }, remove: { summary: 'No cap', value: { message_cap: null } } },
        'x-responses': { 200: { description: 'The workspace with its new cap.', examples: { raised: { summary: 'Cap raised', value: { ...WORKSPACE, message_cap: 200_000 } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, ...WORKSPACE_ERRORS],
      },
    },
    async (request) => {
      const input = { id: request.params.id, message_cap: request.body.message_cap };
      return presentWorkspace(await changeWorkspace({ ctx: operatorContextOf(request, route), input }));
    },
  );
  app.post(
    '/admin/v1/workspaces/:id/wallet/top-ups',
    {
      schema: {
        tags,
        operationId: 'topUpWallet',
        summary: 'Top up the wallet (VND)',
        params: WorkspaceIdParams,
        body: Type.Object({ amount: Type.Integer({ minimum: 1, maximum: MAX_WALLET_BALANCE_VND, description: 'VND; the balance may not exceed 10^15 VND' }), note: Type.Optional(Type.String({ maxLength: MAX_WALLET_NOTE_CHARS })) }, { additionalProperties: false }),
        response: { 201: Type.Object({ balance: Type.Integer(), entry: LedgerEntrySchema }) },
        ...workspaceExample,
        'x-request-examples': { transfer: { summary: 'Two million VND after a bank transfer', value: { amount: 2_000_000, note: TOP_UP_ENTRY.note } } },
        'x-responses': { 201: { description: 'Added: the new balance and its ledger entry.', examples: { topped: { summary: 'Topped up', value: { balance: 2_500_000, entry: TOP_UP_ENTRY } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, ...WORKSPACE_ERRORS],
      },
    },
    async (request, reply) => {
      const entry = await topUp({ ctx: operatorContextOf(request, route), input: { ...request.body, workspaceId: request.params.id } });
      return reply.code(201).send(presentBalanceChange(entry));
    },
  );
  app.post(
    '/admin/v1/workspaces/:id/wallet/adjustments',
    {
      schema: {
        tags,
        operationId: 'adjustWallet',
        summary: 'Correct the wallet balance: a credit or a debit, with its reason',
        description: 'A positive amount credits the wallet, a negative one debits it; the reason goes into the ledger entry (kind `adjustment`). A debit never takes the balance below zero: it is refused whole.',
        params: WorkspaceIdParams,
        body: Type.Object(
          {
            amount: Type.Integer({ minimum: -MAX_WALLET_BALANCE_VND, maximum: MAX_WALLET_BALANCE_VND, description: 'VND: positive credits, negative debits; not 0' }),
            reason: Type.String({ minLength: 1, maxLength: MAX_WALLET_NOTE_CHARS, description: 'Why; kept in the ledger entry and the audit log' }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ balance: Type.Integer(), entry: LedgerEntrySchema }) },
        ...workspaceExample,
        'x-request-examples': { debit: { summary: 'Take back a top-up entered twice', value: { amount: ADJUSTMENT_ENTRY.amount, reason: ADJUSTMENT_ENTRY.note } } },
        'x-responses': {
          201: { description: 'Changed: the new balance and its ledger entry.', examples: { debited: { summary: 'Debited', value: { balance: ADJUSTMENT_ENTRY.balance_after, entry: ADJUSTMENT_ENTRY } } } },
        },
        'x-error-types': [...JSON_BODY_ERRORS, ...WORKSPACE_ERRORS],
      },
    },
    async (request, reply) => {
      const entry = await adjustWallet({ ctx: operatorContextOf(request, route), input: { ...request.body, workspaceId: request.params.id } });
      return reply.code(201).send(presentBalanceChange(entry));
    },
  );
  app.get(
    '/admin/v1/workspaces/:id/wallet',
    {
      schema: {
        tags,
        operationId: 'getWallet',
        summary: 'Read the wallet balance and its ledger, newest first',
        params: WorkspaceIdParams,
        querystring: Paging,
        response: {
          200: Type.Object({ workspace_id: Type.String(), balance: Type.Integer(), ledger: Type.Array(LedgerEntrySchema), count: Type.Integer() }),
        },
        'x-parameter-examples': { id: EXAMPLE.workspaceId, limit: 50, offset: 0 },
        'x-responses': {
          200: {
            description: 'The balance (VND) and one page of the ledger.',
            examples: { wallet: { summary: 'A charge after a top-up', value: { workspace_id: EXAMPLE.workspaceId, balance: 2_499_400, ledger: [CHARGE_ENTRY, TOP_UP_ENTRY], count: 2 } } },
          },
        },
        'x-error-types': ['invalid_request', ...WORKSPACE_ERRORS],
      },
    },
    async (request) => presentWallet(await readWallet({ ctx: operatorContextOf(request, route), input: { ...request.query, workspaceId: request.params.id } })),
  );
}
