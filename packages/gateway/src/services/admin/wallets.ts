import { MAX_WALLET_BALANCE_VND } from '../../lib/limits.ts';
import type { LedgerRow } from '../../store/schema.ts';
import { listLedger, topUpWallet } from '../../store/workspaces.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { requireWholeNumber, requireWorkspace } from './preconditions.ts';

/** Adds VND to a workspace's wallet; answers the top-up's ledger entry, which carries the new balance. */
export async function topUp({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; amount: number; note?: string }>): Promise<LedgerRow> {
  const { workspaceId, amount } = input;
  requireWholeNumber(amount, 'amount', 1, MAX_WALLET_BALANCE_VND);
  const outcome = await topUpWallet(ctx.store, { workspaceId, amount, maxBalance: MAX_WALLET_BALANCE_VND, note: input.note ?? null, now: ctx.clock() });
  if (outcome.kind === 'workspace_not_found') throw new ApiError('workspace_not_found', `workspace ${workspaceId} not found`);
  if (outcome.kind === 'balance_limit') {
    throw badRequest(`a wallet may hold at most ${MAX_WALLET_BALANCE_VND} VND; it holds ${outcome.balance} VND, so it can take at most ${MAX_WALLET_BALANCE_VND - outcome.balance} VND more`);
  }
  return outcome.entry;
}

/** A wallet's balance and one page of its ledger, newest first. */
export interface Wallet {
  workspaceId: string;
  balance: number;
  ledger: LedgerRow[];
}

export async function readWallet({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; limit?: number; offset?: number }>): Promise<Wallet> {
  const workspace = await requireWorkspace(ctx, input.workspaceId);
  const ledger = await listLedger(ctx.store.db, input.workspaceId, { limit: input.limit ?? 50, offset: input.offset ?? 0 });
  return { workspaceId: input.workspaceId, balance: workspace.balance, ledger };
}
