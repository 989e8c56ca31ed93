import type { Kysely } from 'kysely';
import type { Database, SenderAccountRow } from './schema.ts';

/** Connects a sender account, or updates it when the same workspace connects it again. */
export async function upsertSenderAccount(db: Kysely<Database>, row: SenderAccountRow): Promise<SenderAccountRow | undefined> {
  const { oa_id: _oaId, workspace_id: _workspaceId, created_at: _createdAt, ...changes } = row;
  return db
    .insertInto('sender_accounts')
    .values(row)
    .onConflict((conflict) => conflict.column('oa_id').doUpdateSet(changes).where('sender_accounts.workspace_id', '=', row.workspace_id))
    .returningAll()
    .executeTakeFirst();
}

export async function findSenderAccount(db: Kysely<Database>, workspaceId: string, oaId: string): Promise<SenderAccountRow | undefined> {
  return db.selectFrom('sender_accounts').selectAll().where('workspace_id', '=', workspaceId).where('oa_id', '=', oaId).executeTakeFirst();
}

export async function listSenderAccounts(db: Kysely<Database>, workspaceId: string, oaId?: string): Promise<SenderAccountRow[]> {
  let query = db.selectFrom('sender_accounts').selectAll().where('workspace_id', '=', workspaceId);
  if (oaId !== undefined) query = query.where('oa_id', '=', oaId);
  return query.orderBy('oa_id').execute();
}
