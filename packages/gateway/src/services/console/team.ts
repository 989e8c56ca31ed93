/**
 * A workspace's team as its owners manage it in the console (the operator invites the first owner
 * with the same invitation verb, services/console/users.ts): change a member's role, remove a
 * member. A workspace always keeps an owner.
 */
import { changeMemberRole, removeMember } from '../../store/console-team.ts';
import type { ConsoleRole, ConsoleUserRow } from '../../store/schema.ts';
import { recordAudit, type AuditedCaller } from '../audit.ts';
import type { VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { CONSOLE_ROLES } from './users.ts';

function refused(refusal: 'not_found' | 'last_owner', userId: string, what: string): ApiError {
  return refusal === 'not_found'
    ? new ApiError('console_user_not_found', `console user ${userId} not found`)
    : new ApiError('last_owner', `${what} would leave the workspace without an owner; make someone else owner first`);
}

/** Gives a member another role; the last owner cannot be demoted (409). */
export async function changeConsoleUserRole({ ctx, input }: VerbCall<AuditedCaller, { workspaceId: string; userId: string; role: ConsoleRole }>): Promise<ConsoleUserRow> {
  if (!CONSOLE_ROLES.includes(input.role)) throw badRequest(`role must be one of ${CONSOLE_ROLES.join(', ')}`);
  const changed = await changeMemberRole(ctx.store, { ...input, now: ctx.clock() });
  if (typeof changed === 'string') throw refused(changed, input.userId, 'demoting the last owner');
  const { before, after } = changed;
  if (before.role !== after.role) {
    await recordAudit(ctx, { action: 'team.role_change', workspaceId: input.workspaceId, target: after.id, before: { role: before.role }, after: { role: after.role } });
  }
  return after;
}

/** Removes a member and ends their sessions at once; the last owner cannot be removed (409). */
export async function removeConsoleUser({ ctx, input }: VerbCall<AuditedCaller, { workspaceId: string; userId: string }>): Promise<void> {
  const removed = await removeMember(ctx.store, input);
  if (typeof removed === 'string') throw refused(removed, input.userId, 'removing the last owner');
  await recordAudit(ctx, { action: 'team.remove', workspaceId: input.workspaceId, target: removed.id, before: { email: removed.email, role: removed.role }, after: null });
}
