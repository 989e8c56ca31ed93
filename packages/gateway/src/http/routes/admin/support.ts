import { Type } from 'typebox';
import { findMessageAnywhere, readWorkspaceQuota, searchMessages } from '../../../services/admin/support.ts';
import { presentOperatorMessage, presentOperatorMessageList, presentWorkspaceQuota } from '../../presenters/support.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE, MESSAGE_RECORDS } from '../../openapi/example-data.ts';
import { MessageRecord } from '../messages/shared-schemas.ts';
import { QuotaEntrySchema } from '../quota/get.ts';
import { WorkspaceIdParams } from './admin-schemas.ts';
import { MAX_OPERATOR_PAGE_SIZE } from '../../../lib/limits.ts';

const tags = ['Support'];
const OperatorMessageSchema = Type.Object({ workspace_id: Type.String(), ...MessageRecord.properties });
const DELIVERED = { workspace_id: EXAMPLE.workspaceId, ...MESSAGE_RECORDS.delivered };

export function registerAdminSupport(app: App, route: RouteDependencies): void {
  app.get(
    '/admin/v1/messages/:id',
    {
      schema: {
        tags,
        operationId: 'findMessage',
        summary: 'Look up a message by its msg_id, in any workspace',
        params: Type.Object({ id: Type.String({ description: 'The msg_id' }) }),
        'x-parameter-examples': { id: EXAMPLE.messageId },
        response: { 200: OperatorMessageSchema },
        'x-responses': { 200: { description: 'The message as its workspace sees it, with the workspace.', examples: { delivered: { summary: 'Delivered', value: DELIVERED } } } },
        'x-error-types': ['message_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentOperatorMessage(await findMessageAnywhere({ ctx: operatorContextOf(request, route), input: { id: request.params.id } })),
  );
  app.get(
    '/admin/v1/messages',
    {
      schema: {
        tags,
        operationId: 'searchMessages',
        summary: 'Find messages by tracking_id or phone, in one workspace or all, newest first',
        description: 'At least one of `tracking_id` and `phone` (any of the forms the API accepts: 0912…, +84912…, 84912…).',
        querystring: Type.Object(
          {
            workspace_id: Type.Optional(Type.String({ description: 'Only this workspace; every workspace when absent' })),
            tracking_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            phone: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OPERATOR_PAGE_SIZE })),
          },
          { additionalProperties: false },
        ),
        'x-parameter-examples': { workspace_id: EXAMPLE.workspaceId, tracking_id: MESSAGE_RECORDS.delivered.tracking_id, phone: '0912345678', limit: 50 },
        response: { 200: Type.Object({ messages: Type.Array(OperatorMessageSchema), count: Type.Integer(), has_more: Type.Boolean() }) },
        'x-responses': { 200: { description: 'The messages found, newest first.', examples: { found: { summary: 'One message', value: { messages: [DELIVERED], count: 1, has_more: false } } } } },
        'x-error-types': ['invalid_request', 'workspace_not_found', ...OPERATOR_ERRORS],
      },
    },
    async (request) => {
      const { workspace_id: workspaceId, tracking_id: trackingId, phone, limit } = request.query;
      return presentOperatorMessageList(await searchMessages({ ctx: operatorContextOf(request, route), input: { workspaceId, trackingId, phone, limit } }));
    },
  );
  app.get(
    '/admin/v1/workspaces/:id/quota',
    {
      schema: {
        tags,
        operationId: 'getWorkspaceQuota',
        summary: "A workspace's daily quota per sender account (what its GET /api/v1/quota answers)",
        params: WorkspaceIdParams,
        querystring: Type.Object({ oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        'x-parameter-examples': { id: EXAMPLE.workspaceId, oa_id: EXAMPLE.oaId },
        response: { 200: Type.Object({ workspace_id: Type.String(), quotas: Type.Array(QuotaEntrySchema), count: Type.Integer() }) },
        'x-responses': {
          200: {
            description: "Today's quota of each sender account of the workspace (or of the one asked for).",
            examples: {
              quotas: {
                summary: 'One account',
                value: {
                  workspace_id: EXAMPLE.workspaceId,
                  quotas: [{ oa_id: EXAMPLE.oaId, oa_name: EXAMPLE.oaName, daily_quota: 5000, remaining: 4212, used: 788, reset_at: '2026-11-25T00:00:00.000+07:00', error: null }],
                  count: 1,
                },
              },
            },
          },
        },
        'x-error-types': ['invalid_request', 'workspace_not_found', 'sender_account_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => {
      const quotas = await readWorkspaceQuota({ ctx: operatorContextOf(request, route), input: { workspaceId: request.params.id, oa_id: request.query.oa_id } });
      return presentWorkspaceQuota(request.params.id, quotas);
    },
  );
}
