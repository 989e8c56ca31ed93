import { Type } from 'typebox';
import { purgeWorkspacePersonalData } from '../../../services/admin/personal-data.ts';
import { presentPersonalDataPurge } from '../../presenters/personal-data.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { DateTime, Nullable } from '../../schemas.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { WorkspaceIdParams } from './admin-schemas.ts';

const tags = ['Workspaces'];

export const PersonalDataPurgeSchema = Type.Object({
  workspace_id: Type.String(),
  scope: Type.Union([Type.Literal('one_phone'), Type.Literal('workspace')], { description: 'one_phone: only the phone given (not repeated here); workspace: every recipient' }),
  before: Nullable(DateTime),
  erased: Type.Integer({ description: 'Messages whose phone, RSA ciphertext and template data were erased now' }),
  in_flight: Type.Integer({ description: 'Messages in scope still queued or sending, left as they are: purge again once they have gone out (or cancel them)' }),
  reports_deleted: Type.Integer({ description: 'Finished delivery reports of the erased messages deleted (their body names the phone)' }),
});

/** The operator's purge of a workspace's personal data (a customer's erasure request, a contract's end). */
export function registerAdminPersonalData(app: App, route: RouteDependencies): void {
  app.post(
    '/admin/v1/workspaces/:id/personal-data/purge',
    {
      schema: {
        tags,
        operationId: 'purgeWorkspacePersonalData',
        summary: "Erase the phones and template data of a workspace's finished messages now",
        description:
          "For a data subject's erasure request or the end of a contract: the phone, RSA ciphertext and template data of the workspace's sent, delivered and failed messages (only `phone`'s when given; only those created before `before` when given) are erased, and the finished delivery reports of those messages deleted. The records stay (ids, tracking_id, status, times, price) and read with `phone` null. Queued and sending messages are left and counted in `in_flight`. Recorded in the workspace's activity log without the phone. Safe to repeat.",
        params: WorkspaceIdParams,
        body: Type.Object(
          {
            phone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this recipient: any form the API accepts (0…, +84…, 84…), normalised' })),
            before: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only messages created before this time: ISO 8601 (no offset: Vietnam time)' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: PersonalDataPurgeSchema },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-request-examples': {
          subject: { summary: "One recipient's erasure request", value: { phone: EXAMPLE.phoneLocal } },
          contract: { summary: 'The end of a contract: everything sent before it ended', value: { before: '2026-12-01T00:00:00+07:00' } },
        },
        'x-responses': {
          200: {
            description: 'How many messages were erased, how many are still in flight, and how many delivery reports were deleted.',
            examples: {
              subject: { summary: "One recipient's messages erased", value: { workspace_id: EXAMPLE.workspaceId, scope: 'one_phone', before: null, erased: 12, in_flight: 0, reports_deleted: 3 } },
            },
          },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'invalid_date_range', 'workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentPersonalDataPurge(await purgeWorkspacePersonalData({ ctx: operatorContextOf(request, route), input: { ...request.body, workspaceId: request.params.id } })),
  );
}
