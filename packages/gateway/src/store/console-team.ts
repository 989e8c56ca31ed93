/**
 * Team changes that must never leave a workspace without an owner. Two owners demoting each other
 * at the same moment would each still see the other as owner; so each change runs in a
 * transaction that first locks the workspace's row (PostgreSQL; SQLite's BEGIN IMMEDIATE already
 * lets one writer in at a time), and counts the owners only then.
 */
import { sql } from 'kysely';
import { runInTransaction, type Store, type Transaction } from './database.ts';
import type { ConsoleRole, ConsoleUserRow } from './schema.ts';

export type TeamChangeRefusal = 'not_found' | 'last_owner';

async function lockedMember(store: Store, trx: Transaction, workspaceId: string, userId: string): Promise<ConsoleUserRow | undefined> {
  if (store.dialect === 'postgres') await sql`SELECT id FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`.execute(trx);
  return trx.selectFrom('console_users').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', userId).executeTakeFirst();
}

/**
 * Owners who can sign in: an invited owner who has not set a password yet does not count, since
 * the invitation may lapse and leave the workspace with nobody to run it.
 */
async function activeOwnerCount(trx: Transaction, workspaceId: string): Promise<number> {
  const row = await trx
    .selectFrom('console_users')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .where('password_hash', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function isLastActiveOwner(trx: Transaction, member: ConsoleUserRow): Promise<boolean> {
  return member.role === 'owner' && member.password_hash !== null && (await activeOwnerCount(trx, member.workspace_id)) <= 1;
}

/** Gives a member another role, unless they are the last owner and would stop being one. */
export async function changeMemberRole(
  store: Store,
  input: { workspaceId: string; userId: string; role: ConsoleRole; now: number },
): Promise<{ before: ConsoleUserRow; after: ConsoleUserRow } | TeamChangeRefusal> {
  return runInTransaction(store, async (trx) => {
    const before = await lockedMember(store, trx, input.workspaceId, input.userId);
    if (!before) return 'not_found';
    if (before.role === input.role) return { before, after: before };
    if (await isLastActiveOwner(trx, before)) return 'last_owner';
    const after = await trx.updateTable('console_users').set({ role: input.role, updated_at: input.now }).where('id', '=', input.userId).returningAll().executeTakeFirstOrThrow();
    return { before, after };
  });
}

/** Removes a member and ends their sessions, unless they are the workspace's last owner. */
export async function removeMember(store: Store, input: { workspaceId: string; userId: string }): Promise<ConsoleUserRow | TeamChangeRefusal> {
  return runInTransaction(store, async (trx) => {
    const member = await lockedMember(store, trx, input.workspaceId, input.userId);
    if (!member) return 'not_found';
    if (await isLastActiveOwner(trx, member)) return 'last_owner';
    await trx.deleteFrom('console_sessions').where('user_id', '=', input.userId).execute();
    await trx.deleteFrom('console_users').where('id', '=', input.userId).execute();
    return member;
  });
}
