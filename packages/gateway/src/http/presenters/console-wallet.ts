import type { Static } from 'typebox';
import { CSV_BYTE_ORDER_MARK, formatCsvLine } from '../../lib/csv.ts';
import { formatVietnamTime } from '../../lib/vietnam-time.ts';
import type { WalletPage } from '../../services/console/wallet.ts';
import type { LedgerRow } from '../../services/vocabulary.ts';
import type { WalletSchema } from '../routes/console/wallet.ts';
import { presentLedgerEntry } from './workspaces.ts';

export function presentWalletPage(page: WalletPage): Static<typeof WalletSchema> {
  return { balance: page.balance, ledger: page.ledger.map(presentLedgerEntry), has_more: page.hasMore };
}

export const LEDGER_CSV_COLUMNS = ['created_at', 'kind', 'amount', 'balance_after', 'message_count', 'reference', 'note'] as const;

/** Vietnam wall-clock time as spreadsheets read a date-time: 2026-11-24 10:00:00. */
function spreadsheetTime(epochMs: number): string {
  return formatVietnamTime(epochMs).slice(0, 19).replace('T', ' ');
}

/**
 * A note is free text the operator typed: one starting like a formula (=, +, -, @) would run as
 * one when the file is opened in a spreadsheet, so it is written with a leading apostrophe.
 */
function inertText(text: string | null): string | null {
  return text !== null && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

function ledgerLine(row: LedgerRow): string {
  return formatCsvLine([spreadsheetTime(row.created_at), row.kind, row.amount, row.balance_after, row.message_count, row.reference, inertText(row.note)]);
}

/** The ledger as CSV text, written as its pages are read: the byte order mark and header first. */
export async function* presentLedgerCsv(pages: AsyncIterable<LedgerRow[]>): AsyncGenerator<string> {
  yield `${CSV_BYTE_ORDER_MARK}${formatCsvLine(LEDGER_CSV_COLUMNS)}`;
  for await (const page of pages) yield page.map(ledgerLine).join('');
}
