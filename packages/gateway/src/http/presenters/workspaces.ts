import type { Static } from 'typebox';
import { formatUtc } from '../../lib/vietnam-time.ts';
import type { Wallet } from '../../services/admin/wallets.ts';
import type { LedgerRow, WorkspaceRow } from '../../services/vocabulary.ts';
import type { LedgerEntrySchema, WorkspaceSchema } from '../routes/admin/admin-schemas.ts';

/** The workspace of docs/operator.md: `messages_used` is what counts against its cap. */
export function presentWorkspace(row: WorkspaceRow): Static<typeof WorkspaceSchema> {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    balance: row.balance,
    message_cap: row.message_cap,
    messages_used: row.messages_accepted,
    is_demo: row.is_demo === 1,
    created_at: formatUtc(row.created_at),
  };
}

export function presentWorkspaceList(rows: readonly WorkspaceRow[]) {
  return { workspaces: rows.map(presentWorkspace), count: rows.length };
}

export function presentLedgerEntry(row: LedgerRow): Static<typeof LedgerEntrySchema> {
  return {
    id: row.id,
    kind: row.kind,
    amount: row.amount,
    balance_after: row.balance_after,
    message_count: row.message_count,
    reference: row.reference,
    note: row.note,
    created_at: formatUtc(row.created_at),
  };
}

/** The answer to a top-up: the balance it left and its ledger entry. */
export function presentBalanceChange(entry: LedgerRow) {
  return { balance: entry.balance_after, entry: presentLedgerEntry(entry) };
}

export function presentWallet(wallet: Wallet) {
  return { workspace_id: wallet.workspaceId, balance: wallet.balance, ledger: wallet.ledger.map(presentLedgerEntry), count: wallet.ledger.length };
}
