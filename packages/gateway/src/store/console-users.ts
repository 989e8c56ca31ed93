import type { Kysely } from 'kysely';
import type { ConsoleRole, ConsoleUserRow, Database, WorkspaceRow } from './schema.ts';

export async function insertConsoleUser(db: Kysely<Database>, row: ConsoleUserRow): Promise<void> {
  await db.insertInto('console_users').values(row).execute();
}

export type ConsoleUserWithWorkspace = ConsoleUserRow & { workspace_name: string; workspace_status: WorkspaceRow['status'] };

function selectWithWorkspace(db: Kysely<Database>) {
  return db
    .selectFrom('console_users')
    .innerJoin('workspaces', 'workspaces.id', 'console_users.workspace_id')
    .selectAll('console_users')
    .select(['workspaces.name as workspace_name', 'workspaces.status as workspace_status']);
}

/** Sign-in: by the lower-cased e-mail address. */
export async function findConsoleUserByEmail(db: Kysely<Database>, email: string): Promise<ConsoleUserWithWorkspace | undefined> {
  return selectWithWorkspace(db).where('console_users.email', '=', email).executeTakeFirst();
}

export async function findConsoleUserByInvitation(db: Kysely<Database>, invitationHash: string): Promise<ConsoleUserWithWorkspace | undefined> {
  return selectWithWorkspace(db).where('console_users.invitation_hash', '=', invitationHash).executeTakeFirst();
}

export async function listConsoleUsers(db: Kysely<Database>, workspaceId: string): Promise<ConsoleUserRow[]> {
  return db.selectFrom('console_users').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
}

/**
 * Sets the password of an invited user and uses the invitation up, only while the invitation is
 * still unused and live: of two acceptances at once, one wins and the other changes nothing.
 */
export async function acceptConsoleInvitation(
  db: Kysely<Database>,
  input: { invitationHash: string; passwordHash: string; now: number },
): Promise<ConsoleUserRow | undefined> {
  return db
    .updateTable('console_users')
    .set({ password_hash: input.passwordHash, invitation_hash: null, invitation_expires_at: null, updated_at: input.now })
    .where('invitation_hash', '=', input.invitationHash)
    .where('invitation_expires_at', '>', input.now)
    .returningAll()
    .executeTakeFirst();
}

/** A new invitation for a user who never accepted theirs (it lapsed): a new token and expiry. */
export async function renewConsoleInvitation(
  db: Kysely<Database>,
  input: { userId: string; role: ConsoleRole; invitationHash: string; expiresAt: number; now: number },
): Promise<ConsoleUserRow | undefined> {
  return db
    .updateTable('console_users')
    .set({ role: input.role, invitation_hash: input.invitationHash, invitation_expires_at: input.expiresAt, updated_at: input.now })
    .where('id', '=', input.userId)
    .where('password_hash', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function updateConsoleUser(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Pick<ConsoleUserRow, 'role' | 'password_hash' | 'invitation_hash' | 'invitation_expires_at' | 'last_sign_in_at' | 'updated_at'>>,
): Promise<ConsoleUserRow | undefined> {
  return db.updateTable('console_users').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

