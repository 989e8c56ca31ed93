import type { Static } from 'typebox';
import { formatUtc, formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { Invitation } from '../../services/console/users.ts';
import type { ConsoleUserRow } from '../../services/vocabulary.ts';
import type { InvitationSchema, TeamUserSchema } from '../routes/console/access-schemas.ts';

/** A member of a workspace's team: never their password or invitation hash. */
export function presentTeamUser(row: ConsoleUserRow): Static<typeof TeamUserSchema> {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: row.password_hash === null ? 'invited' : 'active',
    created_at: formatUtc(row.created_at),
    last_sign_in_at: formatUtcOrNull(row.last_sign_in_at),
  };
}

export function presentTeam(rows: readonly ConsoleUserRow[]) {
  return { users: rows.map(presentTeamUser) };
}

/** The operator's list: with a count, like the operator's other lists. */
export function presentTeamForOperator(rows: readonly ConsoleUserRow[]) {
  return { users: rows.map(presentTeamUser), count: rows.length };
}

/** A new member with the one-time link to set a password (shown here only). */
export function presentInvitation(invitation: Invitation): Static<typeof InvitationSchema> {
  return { user: presentTeamUser(invitation.user), invitation_url: invitation.invitationUrl, expires_at: formatUtc(invitation.expiresAt) };
}
