import type { Kysely } from 'kysely';
import type { Database, SenderAccountRow } from './schema.ts';

export type SenderAccountStatus = SenderAccountRow['status'];

/** Every status a sender account can be in, so a gauge can report 0 for the ones nobody is in. */
export const SENDER_ACCOUNT_STATUSES: readonly SenderAccountStatus[] = ['connected', 'disconnected', 'relogin_required'];

/** How many sender accounts each workspace has in each status (read at scrape time; a small table). */
export async function countSenderAccountsByStatus(db: Kysely<Database>): Promise<{ workspaceId: string; status: SenderAccountStatus; count: number }[]> {
  const rows = await db
    .selectFrom('sender_accounts')
    .select((eb) => ['workspace_id', 'status', eb.fn.countAll<number | string>().as('count')])
    .groupBy(['workspace_id', 'status'])
    .orderBy('workspace_id')
    .execute();
  return rows.map((row) => ({ workspaceId: row.workspace_id, status: row.status, count: Number(row.count) }));
}

/**
 * The wallet balance (VND) of every active customer workspace. Suspended workspaces send nothing
 * and the demo workspace holds no real money, so neither is a customer whose wallet can run low.
 */
export async function listActiveWalletBalances(db: Kysely<Database>): Promise<{ workspaceId: string; balance: number }[]> {
  const rows = await db
    .selectFrom('workspaces')
    .select(['id', 'balance'])
    .where('status', '=', 'active')
    .where('is_demo', '=', 0)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ workspaceId: row.id, balance: Number(row.balance) }));
}
