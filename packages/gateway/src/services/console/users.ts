import { sha256Hex } from '../../lib/crypto.ts';
import { createSecretToken, createSortableId } from '../../lib/ids.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, hashPassword } from '../../lib/passwords.ts';
import {
  acceptConsoleInvitation,
  findConsoleUserByEmail,
  findConsoleUserByInvitation,
  insertConsoleUser,
  listConsoleUsers,
  renewConsoleInvitation,
  type ConsoleUserWithWorkspace,
} from '../../store/console-users.ts';
import type { ConsoleRole, ConsoleUserRow } from '../../store/schema.ts';
import { recordAudit, type AuditedCaller } from '../audit.ts';
import type { AnonymousCaller, Context, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { requireWorkspace } from '../admin/preconditions.ts';

export const CONSOLE_ROLES: readonly ConsoleRole[] = ['viewer', 'developer', 'owner'];

/** Whether `role` may do what needs at least `minimum` (viewer < developer < owner). */
export function roleAllows(role: ConsoleRole, minimum: ConsoleRole): boolean {
  return CONSOLE_ROLES.indexOf(role) >= CONSOLE_ROLES.indexOf(minimum);
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const EMAIL_MAX_LENGTH = 254;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The link that lets an invited person set a password and sign in. */
export function invitationUrl(ctx: Context, token: string, origin: string): string {
  return `${ctx.parts.config.console.publicUrl ?? origin}/console/invitations/${token}`;
}

export interface Invitation {
  user: ConsoleUserRow;
  /** Shown once to whoever invites; stored only as a hash. */
  invitationUrl: string;
  expiresAt: number;
}

export interface InviteInput {
  workspaceId: string;
  email: string;
  role: ConsoleRole;
  /** Where the console is reached when TMS_PUBLIC_URL is unset, e.g. `http://127.0.0.1:3000`. */
  origin: string;
}

const taken = (email: string): ApiError => new ApiError('console_user_taken', `a console user with the e-mail address ${email} exists already`);

/**
 * Creates a console user of a workspace with a one-time link to set a password. No e-mail is
 * sent: the link is shown to the operator or owner who invites, to pass on. Inviting someone of the
 * workspace who never set a password again gives them a new link (the old one stops working), so
 * a lost or lapsed link is never a dead end.
 */
export async function inviteConsoleUser({ ctx, input }: VerbCall<AuditedCaller, InviteInput>): Promise<Invitation> {
  await requireWorkspace(ctx, input.workspaceId);
  const email = normalizeEmail(input.email);
  if (email.length > EMAIL_MAX_LENGTH || !EMAIL_PATTERN.test(email)) throw badRequest(`"${input.email}" is not an e-mail address`);
  if (!CONSOLE_ROLES.includes(input.role)) throw badRequest(`role must be one of ${CONSOLE_ROLES.join(', ')}`);
  const now = ctx.clock();
  const token = createSecretToken('inv_');
  const expiresAt = now + ctx.parts.config.console.invitationMs;
  const existing = await findConsoleUserByEmail(ctx.store.db, email);
  if (existing) {
    if (existing.workspace_id !== input.workspaceId || existing.password_hash !== null) throw taken(email);
    const renewed = await renewConsoleInvitation(ctx.store.db, { userId: existing.id, role: input.role, invitationHash: sha256Hex(token), expiresAt, now });
    if (!renewed) throw taken(email);
    await recordAudit(ctx, { action: 'team.invite', workspaceId: input.workspaceId, target: renewed.id, before: { role: existing.role }, after: { email, role: input.role } });
    return { user: renewed, invitationUrl: invitationUrl(ctx, token, input.origin), expiresAt };
  }
  const user: ConsoleUserRow = {
    id: createSortableId('usr', now),
    workspace_id: input.workspaceId,
    email,
    role: input.role,
    password_hash: null,
    invitation_hash: sha256Hex(token),
    invitation_expires_at: expiresAt,
    last_sign_in_at: null,
    created_at: now,
    updated_at: now,
  };
  try {
    await insertConsoleUser(ctx.store.db, user);
  } catch (error) {
    // Two invitations of one address at once: the unique index decides.
    if (await findConsoleUserByEmail(ctx.store.db, email)) throw taken(email);
    throw error;
  }
  await recordAudit(ctx, { action: 'team.invite', workspaceId: input.workspaceId, target: user.id, before: null, after: { email, role: input.role } });
  return { user, invitationUrl: invitationUrl(ctx, token, input.origin), expiresAt };
}

export async function listTeam({ ctx, input }: VerbCall<AuditedCaller, { workspaceId: string }>): Promise<ConsoleUserRow[]> {
  await requireWorkspace(ctx, input.workspaceId);
  return listConsoleUsers(ctx.store.db, input.workspaceId);
}

async function openInvitation(ctx: Context, token: string): Promise<ConsoleUserWithWorkspace> {
  const user = await findConsoleUserByInvitation(ctx.store.db, sha256Hex(token));
  if (!user || user.invitation_expires_at === null || user.invitation_expires_at <= ctx.clock()) {
    throw new ApiError('invitation_not_found', 'this invitation link is unknown, used or expired');
  }
  return user;
}

/** What the set-password page shows before the password is chosen. */
export async function readInvitation({ ctx, input }: VerbCall<AnonymousCaller, { token: string }>): Promise<ConsoleUserWithWorkspace> {
  return openInvitation(ctx, input.token);
}

export function checkPasswordRules(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw badRequest(`a password must have ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
}

/** Sets the invited user's password and uses the link up; the caller then starts a session. */
export async function acceptInvitation({ ctx, input }: VerbCall<AnonymousCaller, { token: string; password: string }>): Promise<ConsoleUserWithWorkspace> {
  checkPasswordRules(input.password);
  const user = await openInvitation(ctx, input.token);
  const passwordHash = await hashPassword(input.password);
  const updated = await acceptConsoleInvitation(ctx.store.db, { invitationHash: sha256Hex(input.token), passwordHash, now: ctx.clock() });
  if (!updated) throw new ApiError('invitation_not_found', 'this invitation link is unknown, used or expired');
  return { ...user, ...updated };
}
