import type { Kysely } from 'kysely';
import { createSortableId } from '../lib/ids.ts';
import { runInTransaction, type Store } from './database.ts';
import type { Database, LedgerRow, WorkspaceRow } from './schema.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';

export async function insertWorkspace(
  db: Kysely<Database>,
  input: { name: string; messageCap: number | null; isDemo?: boolean; now: number },
): Promise<WorkspaceRow> {
  const row: WorkspaceRow = {
    id: createSortableId('ws', input.now),
    name: input.name,
    status: 'active',
    balance: 0,
    message_cap: input.messageCap,
    messages_accepted: 0,
    is_demo: input.isDemo ? 1 : 0,
    created_at: input.now,
    updated_at: input.now,
  };
  await db.insertInto('workspaces').values(row).execute();
  return row;
}

export async function findWorkspace(db: Kysely<Database>, id: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findDemoWorkspace(db: Kysely<Database>): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('is_demo', '=', 1).orderBy('id').executeTakeFirst();
}

export async function listWorkspaces(db: Kysely<Database>, page: { limit: number; offset: number }): Promise<WorkspaceRow[]> {
  return db.selectFrom('workspaces').selectAll().orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export async function updateWorkspace(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Pick<WorkspaceRow, 'status' | 'message_cap' | 'name'>>,
  now: number,
): Promise<WorkspaceRow | undefined> {
  return db.updateTable('workspaces').set({ ...changes, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
}

export type BalanceChangeOutcome =
  | { kind: 'changed'; entry: LedgerRow }
  | { kind: 'workspace_not_found' }
  /** The balance would pass maxBalance (a credit) or fall below zero (a debit): nothing changed. */
  | { kind: 'out_of_bounds'; balance: number };

/**
 * Adds money to a wallet (a negative amount takes it away) with its ledger entry, in one
 * transaction. The balance stays within 0..maxBalance: the bound is part of the UPDATE itself, so
 * concurrent changes (and charges) cannot cross it between a read and a write.
 */
export async function changeWalletBalance(
  store: Store,
  input: { workspaceId: string; amount: number; kind: 'top_up' | 'adjustment'; maxBalance: number; note: string | null; now: number },
): Promise<BalanceChangeOutcome> {
  return runInTransaction(store, async (trx): Promise<BalanceChangeOutcome> => {
    const updated = await trx
      .updateTable('workspaces')
      .set((eb) => ({ balance: eb('balance', '+', input.amount), updated_at: input.now }))
      .where('id', '=', input.workspaceId)
      .where('balance', '<=', input.maxBalance - input.amount)
      .where('balance', '>=', -input.amount)
      .returning('balance')
      .executeTakeFirst();
    if (!updated) {
      const workspace = await trx.selectFrom('workspaces').select('balance').where('id', '=', input.workspaceId).executeTakeFirst();
      return workspace ? { kind: 'out_of_bounds', balance: workspace.balance } : { kind: 'workspace_not_found' };
    }
    const entry: LedgerRow = {
      id: createSortableId('led', input.now),
      workspace_id: input.workspaceId,
      kind: input.kind,
      amount: input.amount,
      balance_after: updated.balance,
      message_count: 0,
      reference: null,
      note: input.note,
      created_at: input.now,
    };
    await trx.insertInto('wallet_ledger').values(entry).execute();
    return { kind: 'changed', entry };
  });
}

export async function listLedger(
  db: Kysely<Database>,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<LedgerRow[]> {
  return db
    .selectFrom('wallet_ledger')
    .modifyFront(PLANNED_PER_RUN)
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/**
 * Ledger entries created in [from, to] (either bound optional), oldest first, after the entry
 * `afterId` when given: a keyset page, so exporting a long ledger never re-reads what it skipped.
 */
export async function listLedgerAfter(
  db: Kysely<Database>,
  workspaceId: string,
  input: { afterId: string | null; from?: number; to?: number; limit: number },
): Promise<LedgerRow[]> {
  let query = db.selectFrom('wallet_ledger').modifyFront(PLANNED_PER_RUN).selectAll().where('workspace_id', '=', workspaceId);
  if (input.afterId !== null) query = query.where('id', '>', input.afterId);
  if (input.from !== undefined) query = query.where('created_at', '>=', input.from);
  if (input.to !== undefined) query = query.where('created_at', '<=', input.to);
  return query.orderBy('id').limit(input.limit).execute();
}
