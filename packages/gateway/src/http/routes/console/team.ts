import { Type } from 'typebox';
import { changeConsoleUserRole, removeConsoleUser } from '../../../services/console/team.ts';
import { inviteConsoleUser, listTeam } from '../../../services/console/users.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { JSON_BODY_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { presentInvitation, presentTeam, presentTeamUser } from '../../presenters/console-team.ts';
import { consoleContextOf, requestOrigin, type App, type RouteDependencies } from '../../route-support.ts';
import { CONSOLE_CHANGE_ERRORS, CONSOLE_READ_ERRORS, InvitationSchema, InviteBody, TeamUserSchema } from './access-schemas.ts';
import { ConsoleRoleSchema } from './session-schemas.ts';

const tags = ['Console'];
const UserIdParams = Type.Object({ user_id: Type.String({ description: 'The console user id (usr_…)' }) });
const USER_ERRORS = ['console_user_not_found', ...PATH_PARAMETER_ERRORS] as const;

const MEMBER = {
  id: 'usr_01KAT30A1B2C3D4E5F6G7H8J9K',
  email: 'an.nguyen@hoasen.vn',
  role: 'developer',
  status: 'active',
  created_at: '2026-11-20T03:05:44.019Z',
  last_sign_in_at: '2026-11-24T01:58:12.300Z',
};

/** The workspace's people: everyone may see the team; owners invite, change roles and remove. */
export function registerConsoleTeam(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/team',
    {
      schema: {
        tags,
        operationId: 'consoleListTeam',
        summary: "The workspace's console users, invited ones included",
        response: { 200: Type.Object({ users: Type.Array(TeamUserSchema) }) },
        'x-responses': { 200: { description: 'Every member, oldest first.', examples: { team: { summary: 'An owner and a developer', value: { users: [{ ...MEMBER, id: 'usr_01KAT2Z9A1B2C3D4E5F6G7H8J9', email: 'chu@hoasen.vn', role: 'owner' }, MEMBER] } } } } },
        'x-error-types': CONSOLE_READ_ERRORS,
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => {
      const ctx = consoleContextOf(request, route);
      return presentTeam(await listTeam({ ctx, input: { workspaceId: ctx.caller.workspaceId } }));
    },
  );

  app.post(
    '/console/api/team/invitations',
    {
      schema: {
        tags,
        operationId: 'consoleInviteUser',
        summary: 'Invite someone: answers the one-time link to set a password (no e-mail is sent)',
        body: InviteBody,
        response: { 201: InvitationSchema },
        'x-request-examples': { developer: { summary: 'Invite a developer', value: { email: MEMBER.email, role: 'developer' } } },
        'x-responses': {
          201: {
            description: 'Invited. `invitation_url` is shown here only: pass it on.',
            examples: {
              invited: {
                summary: 'Invited',
                value: { user: { ...MEMBER, status: 'invited', last_sign_in_at: null }, invitation_url: 'https://tms.hoasen.vn/console/invitations/inv_Qm9uZ1RoaUxpbmtJc09uZVRpbWU', expires_at: '2026-11-27T03:05:44.019Z' },
              },
            },
          },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'console_user_taken', ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'owner'),
    },
    async (request, reply) => {
      const ctx = consoleContextOf(request, route);
      const invitation = await inviteConsoleUser({ ctx, input: { ...request.body, workspaceId: ctx.caller.workspaceId, origin: requestOrigin(request) } });
      return reply.code(201).send(presentInvitation(invitation));
    },
  );

  app.patch(
    '/console/api/team/:user_id',
    {
      schema: {
        tags,
        operationId: 'consoleChangeUserRole',
        summary: "Change a member's role (the last owner cannot be demoted)",
        params: UserIdParams,
        body: Type.Object({ role: ConsoleRoleSchema }, { additionalProperties: false }),
        response: { 200: TeamUserSchema },
        'x-parameter-examples': { user_id: MEMBER.id },
        'x-request-examples': { owner: { summary: 'Make a developer an owner', value: { role: 'owner' } } },
        'x-responses': { 200: { description: 'The member as changed.', examples: { owner: { summary: 'Now an owner', value: { ...MEMBER, role: 'owner' } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, ...USER_ERRORS, 'last_owner', ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'owner'),
    },
    async (request) => {
      const ctx = consoleContextOf(request, route);
      return presentTeamUser(await changeConsoleUserRole({ ctx, input: { workspaceId: ctx.caller.workspaceId, userId: request.params.user_id, role: request.body.role } }));
    },
  );

  app.delete(
    '/console/api/team/:user_id',
    {
      schema: {
        tags,
        operationId: 'consoleRemoveUser',
        summary: 'Remove a member and end their sessions (the last owner cannot be removed)',
        params: UserIdParams,
        response: { 204: Type.Null({ description: 'Removed' }) },
        'x-parameter-examples': { user_id: MEMBER.id },
        'x-error-types': [...USER_ERRORS, 'last_owner', ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'owner'),
    },
    async (request, reply) => {
      const ctx = consoleContextOf(request, route);
      await removeConsoleUser({ ctx, input: { workspaceId: ctx.caller.workspaceId, userId: request.params.user_id } });
      return reply.code(204).send(null);
    },
  );
}
