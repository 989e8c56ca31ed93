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

/** The workspace a sender account is connected to, in any workspace. */
export async function findSenderAccountWorkspace(db: Kysely<Database>, oaId: string): Promise<string | undefined> {
  const row = await db.selectFrom('sender_accounts').select('workspace_id').where('oa_id', '=', oaId).executeTakeFirst();
  return row?.workspace_id;
}

export async function listSenderAccounts(db: Kysely<Database>, workspaceId: string, oaId?: string): Promise<SenderAccountRow[]> {
  let query = db.selectFrom('sender_accounts').selectAll().where('workspace_id', '=', workspaceId);
  if (oaId !== undefined) query = query.where('oa_id', '=', oaId);
  return query.orderBy('oa_id').execute();
}

/** Sets a sender account's status when it is one of `from`; undefined when there is no such account or it was not. */
export async function changeSenderAccountStatus(
  db: Kysely<Database>,
  input: { workspaceId: string; oaId: string; from: readonly SenderAccountRow['status'][]; to: SenderAccountRow['status']; now: number },
): Promise<SenderAccountRow | undefined> {
  return db
    .updateTable('sender_accounts')
    .set({ status: input.to, updated_at: input.now })
    .where('workspace_id', '=', input.workspaceId)
    .where('oa_id', '=', input.oaId)
    .where('status', 'in', [...input.from])
    .returningAll()
    .executeTakeFirst();
}
