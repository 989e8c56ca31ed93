import { Type } from 'typebox';
import { readWorkspaceActivity } from '../../../services/console/activity.ts';
import { inviteConsoleUser, listTeam } from '../../../services/console/users.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { presentActivityForOperator } from '../../presenters/console-activity.ts';
import { presentInvitation, presentTeamForOperator } from '../../presenters/console-team.ts';
import { operatorContextOf, requestOrigin, type App, type RouteDependencies } from '../../route-support.ts';
import { ACTIVITY_EXAMPLE } from '../console/activity.ts';
import { ActivityEntrySchema, ActivityPaging, InvitationSchema, InviteBody, TeamUserSchema } from '../console/access-schemas.ts';
import { WorkspaceIdParams } from './admin-schemas.ts';

const tags = ['Console users'];

const OWNER = {
  id: 'usr_01KAT2Z9A1B2C3D4E5F6G7H8J9',
  email: 'chu@hoasen.vn',
  role: 'owner',
  status: 'invited',
  created_at: '2026-11-20T03:01:02.000Z',
  last_sign_in_at: null,
};

/** A workspace's console users (the operator invites the first owner) and its activity log. */
export function registerAdminUsers(app: App, route: RouteDependencies): void {
  app.post(
    '/admin/v1/workspaces/:id/users',
    {
      schema: {
        tags,
        operationId: 'inviteConsoleUser',
        summary: 'Invite a console user (the first owner): answers the one-time link to set a password',
        description: 'No e-mail is sent: pass the link on. It works once, for TMS_CONSOLE_INVITATION_HOURS.',
        params: WorkspaceIdParams,
        body: InviteBody,
        response: { 201: InvitationSchema },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-request-examples': { owner: { summary: "The shop's first owner", value: { email: OWNER.email, role: 'owner' } } },
        'x-responses': {
          201: {
            description: 'Invited. `invitation_url` is shown here only.',
            examples: { invited: { summary: 'Invited', value: { user: OWNER, invitation_url: 'https://tms.hoasen.vn/console/invitations/inv_Qm9uZ1RoaUxpbmtJc09uZVRpbWU', expires_at: '2026-11-23T03:01:02.000Z' } } },
          },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'workspace_not_found', 'console_user_taken', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request, reply) => {
      const invitation = await inviteConsoleUser({ ctx: operatorContextOf(request, route), input: { ...request.body, workspaceId: request.params.id, origin: requestOrigin(request) } });
      return reply.code(201).send(presentInvitation(invitation));
    },
  );
  app.get(
    '/admin/v1/workspaces/:id/users',
    {
      schema: {
        tags,
        operationId: 'listConsoleUsers',
        summary: "A workspace's console users, invited ones included",
        params: WorkspaceIdParams,
        response: { 200: Type.Object({ users: Type.Array(TeamUserSchema), count: Type.Integer() }) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId },
        'x-responses': { 200: { description: 'Every user, oldest first.', examples: { users: { summary: 'The invited owner', value: { users: [OWNER], count: 1 } } } } },
        'x-error-types': ['workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentTeamForOperator(await listTeam({ ctx: operatorContextOf(request, route), input: { workspaceId: request.params.id } })),
  );
  app.get(
    '/admin/v1/workspaces/:id/activity',
    {
      schema: {
        tags,
        operationId: 'listWorkspaceActivity',
        summary: "A workspace's activity log: every change made in its console or by the operator, newest first",
        params: WorkspaceIdParams,
        querystring: ActivityPaging,
        response: { 200: Type.Object({ entries: Type.Array(ActivityEntrySchema), count: Type.Integer(), has_more: Type.Boolean() }) },
        'x-parameter-examples': { id: EXAMPLE.workspaceId, limit: 50, offset: 0 },
        'x-responses': { 200: { description: 'One page of the log.', examples: { page: { summary: 'A webhook URL changed in the console', value: { entries: [ACTIVITY_EXAMPLE], count: 1, has_more: false } } } } },
        'x-error-types': ['invalid_request', 'workspace_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentActivityForOperator(await readWorkspaceActivity({ ctx: operatorContextOf(request, route), input: { ...request.query, workspaceId: request.params.id } })),
  );
}
