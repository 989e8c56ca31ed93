import type { Kysely } from 'kysely';
import type { ConsoleSessionRow, Database } from './schema.ts';
import type { ConsoleUserWithWorkspace } from './console-users.ts';

export async function insertConsoleSession(db: Kysely<Database>, row: ConsoleSessionRow): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

export type ConsoleSessionWithUser = ConsoleSessionRow & { user: ConsoleUserWithWorkspace };

/** A session by the hash of its cookie, with its user and the user's workspace. */
export async function findConsoleSession(db: Kysely<Database>, idHash: string): Promise<ConsoleSessionWithUser | undefined> {
  const row = await db
    .selectFrom('console_sessions')
    .innerJoin('console_users', 'console_users.id', 'console_sessions.user_id')
    .innerJoin('workspaces', 'workspaces.id', 'console_users.workspace_id')
    .selectAll('console_sessions')
    .select([
      'console_users.email',
      'console_users.role',
      'console_users.password_hash',
      'console_users.invitation_hash',
      'console_users.invitation_expires_at',
      'console_users.last_sign_in_at',
      'console_users.created_at as user_created_at',
      'console_users.updated_at as user_updated_at',
      'workspaces.name as workspace_name',
      'workspaces.status as workspace_status',
    ])
    .where('console_sessions.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { email, role, password_hash, invitation_hash, invitation_expires_at, last_sign_in_at, user_created_at, user_updated_at, workspace_name, workspace_status, ...session } =
    row;
  return {
    ...session,
    user: {
      id: session.user_id,
      workspace_id: session.workspace_id,
      email,
      role,
      password_hash,
      invitation_hash,
      invitation_expires_at,
      last_sign_in_at,
      created_at: user_created_at,
      updated_at: user_updated_at,
      workspace_name,
      workspace_status,
    },
  };
}

export async function touchConsoleSession(db: Kysely<Database>, idHash: string, now: number): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
}

export async function deleteConsoleSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
}

export async function deleteConsoleSessionsOfUser(db: Kysely<Database>, userId: string): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Maintenance: sessions past their absolute expiry or idle for longer than `idleMs`. */
export async function deleteExpiredConsoleSessions(db: Kysely<Database>, now: number, idleMs: number): Promise<number> {
  const result = await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - idleMs)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
