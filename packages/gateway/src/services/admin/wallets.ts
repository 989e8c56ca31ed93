import { MAX_WALLET_BALANCE_VND } from '../../lib/limits.ts';
import type { LedgerRow } from '../../store/schema.ts';
import { changeWalletBalance, listLedger } from '../../store/workspaces.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { requireWholeNumber, requireWorkspace } from './preconditions.ts';

/** Most characters of a top-up note or an adjustment's reason. */
export const MAX_WALLET_NOTE_CHARS = 500;

async function changeBalance(ctx: Context<OperatorCaller>, input: { workspaceId: string; amount: number; kind: 'top_up' | 'adjustment'; note: string | null }): Promise<LedgerRow> {
  const { workspaceId, amount } = input;
  const outcome = await changeWalletBalance(ctx.store, { ...input, maxBalance: MAX_WALLET_BALANCE_VND, now: ctx.clock() });
  if (outcome.kind === 'workspace_not_found') throw new ApiError('workspace_not_found', `workspace ${workspaceId} not found`);
  if (outcome.kind === 'out_of_bounds') {
    if (amount < 0) throw badRequest(`a debit of ${-amount} VND would take the balance below zero: it holds ${outcome.balance} VND`);
    throw badRequest(`a wallet may hold at most ${MAX_WALLET_BALANCE_VND} VND; it holds ${outcome.balance} VND, so it can take at most ${MAX_WALLET_BALANCE_VND - outcome.balance} VND more`);
  }
  const { entry } = outcome;
  await recordAudit(ctx, {
    action: input.kind === 'top_up' ? 'wallet.top_up' : 'wallet.adjust',
    workspaceId,
    target: entry.id,
    before: { balance: entry.balance_after - amount },
    after: { balance: entry.balance_after, amount, note: input.note },
  });
  return entry;
}

/** Adds VND to a workspace's wallet; answers the top-up's ledger entry, which carries the new balance. */
export async function topUp({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; amount: number; note?: string }>): Promise<LedgerRow> {
  requireWholeNumber(input.amount, 'amount', 1, MAX_WALLET_BALANCE_VND);
  return changeBalance(ctx, { workspaceId: input.workspaceId, amount: input.amount, kind: 'top_up', note: input.note ?? null });
}

/**
 * An operator's correction of a balance: a credit (positive amount) or a debit (negative), with a
 * reason that goes into its ledger entry. A debit never takes the balance below zero.
 */
export async function adjustWallet({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; amount: number; reason: string }>): Promise<LedgerRow> {
  if (input.amount === 0) throw badRequest('amount must not be 0: a positive amount credits the wallet, a negative one debits it');
  requireWholeNumber(Math.abs(input.amount), 'amount', 1, MAX_WALLET_BALANCE_VND);
  const reason = input.reason.trim();
  if (reason === '') throw badRequest('an adjustment needs a reason');
  if (reason.length > MAX_WALLET_NOTE_CHARS) throw badRequest(`the reason may have at most ${MAX_WALLET_NOTE_CHARS} characters`);
  return changeBalance(ctx, { workspaceId: input.workspaceId, amount: input.amount, kind: 'adjustment', note: reason });
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
