import { Type } from 'typebox';
import { listOperatorAudit } from '../../../services/audit.ts';
import { createOperatorToken, listOperatorTokens, revokeOperatorToken } from '../../../services/operator-tokens.ts';
import { presentAuditPage, presentCreatedOperatorToken, presentOperatorToken, presentOperatorTokenList } from '../../presenters/operators.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { MAX_INT32, MAX_OPERATOR_PAGE_SIZE } from '../../../lib/limits.ts';
import { AuditEntrySchema, OperatorTokenSchema } from './admin-schemas.ts';

const tags = ['Operators and audit'];
const TOKEN = {
  id: 'opt_01KAT5C3D5E7F9G1H3J5K7M9N1',
  name: 'lan.nguyen (support)',
  token_prefix: 'tms_op_X4bT9q',
  created_by: 'bootstrap token',
  created_at: '2026-11-25T02:00:00.000Z',
  revoked_at: null,
};
const AUDIT_ENTRY = {
  id: 'act_01KAT5D4E6F8G0H2J4K6M8N0P2',
  at: '2026-11-25T02:10:00.000Z',
  workspace_id: EXAMPLE.workspaceId,
  actor: { kind: 'operator', id: TOKEN.id, name: TOKEN.name },
  action: 'wallet.adjust',
  target: 'led_01KAT4B2C4D6E8F0G2H4J6K8M0',
  before: { balance: 2_499_400 },
  after: { balance: 2_349_400, amount: -150_000, note: 'Hoá đơn 2026-11 tính trùng: hoàn lại khoản nạp thừa' },
} as const;

export function registerAdminOperators(app: App, route: RouteDependencies): void {
  app.post(
    '/admin/v1/operator-tokens',
    {
      schema: {
        tags,
        operationId: 'createOperatorToken',
        summary: 'Create a named operator token (shown once)',
        description: 'Each person or automation gets its own token, so the audit log says who changed what. TMS_ADMIN_TOKEN stays the bootstrap token.',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
        response: { 201: Type.Object({ ...OperatorTokenSchema.properties, token: Type.String({ description: 'The token itself: this answer only' }) }) },
        'x-request-examples': { person: { summary: 'A support engineer', value: { name: TOKEN.name } } },
        'x-responses': { 201: { description: 'Created; keep the token now.', examples: { created: { summary: 'Created', value: { ...TOKEN, token: 'tms_op_X4bT9qLw2mZr7Kc1Vh8Nd3Pf6Gy0Jt5Bs' } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request, reply) => reply.code(201).send(presentCreatedOperatorToken(await createOperatorToken({ ctx: operatorContextOf(request, route), input: request.body }))),
  );
  app.get(
    '/admin/v1/operator-tokens',
    {
      schema: {
        tags,
        operationId: 'listOperatorTokens',
        summary: 'List operator tokens, revoked ones included, newest first',
        response: { 200: Type.Object({ operator_tokens: Type.Array(OperatorTokenSchema), count: Type.Integer() }) },
        'x-responses': { 200: { description: 'Every named token (never the tokens themselves).', examples: { one: { summary: 'One token', value: { operator_tokens: [TOKEN], count: 1 } } } } },
        'x-error-types': OPERATOR_ERRORS,
      },
    },
    async (request) => presentOperatorTokenList(await listOperatorTokens({ ctx: operatorContextOf(request, route), input: {} })),
  );
  app.post(
    '/admin/v1/operator-tokens/:id/revoke',
    {
      schema: {
        tags,
        operationId: 'revokeOperatorToken',
        summary: 'Revoke a named operator token',
        description: 'Refused by every process within TMS_AUTH_CACHE_MS. Revoking a revoked token changes nothing.',
        params: Type.Object({ id: Type.String() }),
        'x-parameter-examples': { id: TOKEN.id },
        response: { 200: OperatorTokenSchema },
        'x-responses': { 200: { description: 'The token, revoked.', examples: { revoked: { summary: 'Revoked', value: { ...TOKEN, revoked_at: '2026-11-25T03:00:00.000Z' } } } } },
        'x-error-types': ['operator_token_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentOperatorToken(await revokeOperatorToken({ ctx: operatorContextOf(request, route), input: { id: request.params.id } })),
  );
  app.get(
    '/admin/v1/audit',
    {
      schema: {
        tags,
        operationId: 'listAudit',
        summary: 'The audit log: every operator and console change, newest first',
        description: 'Who (a console user, or the operator by token name), what, when, and the values before and after; never secrets.',
        querystring: Type.Object(
          {
            workspace_id: Type.Optional(Type.String({ description: "Only this workspace's changes" })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OPERATOR_PAGE_SIZE })),
            offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32 })),
          },
          { additionalProperties: false },
        ),
        'x-parameter-examples': { workspace_id: EXAMPLE.workspaceId, limit: 50, offset: 0 },
        response: { 200: Type.Object({ entries: Type.Array(AuditEntrySchema), count: Type.Integer(), has_more: Type.Boolean() }) },
        'x-responses': { 200: { description: 'One page of the log.', examples: { page: { summary: 'A wallet correction', value: { entries: [AUDIT_ENTRY], count: 1, has_more: false } } } } },
        'x-error-types': ['invalid_request', ...OPERATOR_ERRORS],
      },
    },
    async (request) => {
      const { workspace_id: workspaceId, limit, offset } = request.query;
      return presentAuditPage(await listOperatorAudit({ ctx: operatorContextOf(request, route), input: { workspaceId, limit, offset } }));
    },
  );
}
