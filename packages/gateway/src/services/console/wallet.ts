/** A workspace's wallet as its people see it: the balance, the ledger page by page, the ledger exported. */
import { parseDateTime } from '../../lib/vietnam-time.ts';
import type { LedgerRow, WorkspaceRow } from '../../store/schema.ts';
import { findWorkspace, listLedger, listLedgerAfter } from '../../store/workspaces.ts';
import type { ConsoleUserCaller, Context, VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';

export interface WalletPage {
  balance: number;
  /** Newest first. */
  ledger: LedgerRow[];
  hasMore: boolean;
}

/** Rows read per query while exporting: the export streams, so a long ledger never sits in memory whole. */
const EXPORT_PAGE_ROWS = 2000;

async function requireOwnWorkspace(ctx: Context<ConsoleUserCaller>): Promise<WorkspaceRow> {
  const workspace = await findWorkspace(ctx.store.db, ctx.caller.workspaceId);
  if (!workspace) throw new ApiError('workspace_not_found', `workspace ${ctx.caller.workspaceId} not found`);
  return workspace;
}

/** GET /console/api/wallet: the balance and one page of the ledger, newest first. */
export async function readWallet({ ctx, input }: VerbCall<ConsoleUserCaller, { limit?: number; offset?: number }>): Promise<WalletPage> {
  const limit = input.limit ?? 50;
  const workspace = await requireOwnWorkspace(ctx);
  const rows = await listLedger(ctx.store.db, workspace.id, { limit: limit + 1, offset: input.offset ?? 0 });
  return { balance: workspace.balance, ledger: rows.slice(0, limit), hasMore: rows.length > limit };
}

function boundOf(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parseDateTime(value);
  if (parsed === null) throw new ApiError('invalid_date_range', `${name} "${value}" is not an ISO 8601 date-time`);
  return parsed;
}

export interface LedgerExport {
  workspaceId: string;
  /** Entries created between from and to (both included), oldest first, a page at a time. */
  pages: AsyncIterable<LedgerRow[]>;
}

/**
 * GET /console/api/wallet/ledger.csv: the bounds are checked before the first byte is sent (a
 * bad one is a 400, not a cut-off file); the entries are then read page by page as they are written.
 */
export async function exportLedger({ ctx, input }: VerbCall<ConsoleUserCaller, { from?: string; to?: string }>): Promise<LedgerExport> {
  const from = boundOf('from', input.from);
  const to = boundOf('to', input.to);
  const workspace = await requireOwnWorkspace(ctx);
  const db = ctx.store.db;
  async function* pages(): AsyncGenerator<LedgerRow[]> {
    let afterId: string | null = null;
    for (;;) {
      const page: LedgerRow[] = await listLedgerAfter(db, workspace.id, { afterId, from, to, limit: EXPORT_PAGE_ROWS });
      if (page.length > 0) yield page;
      if (page.length < EXPORT_PAGE_ROWS) return;
      afterId = page[page.length - 1]!.id;
    }
  }
  return { workspaceId: workspace.id, pages: pages() };
}
