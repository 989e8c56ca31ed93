import { createSortableId } from '../lib/ids.ts';
import { insertAuditEntry, listAllAuditEntries, listAuditEntries } from '../store/audit-log.ts';
import type { AuditLogRow } from '../store/schema.ts';
import type { ConsoleUserCaller, Context, OperatorCaller, VerbCall } from './context.ts';

/** Who may change a workspace's settings: its console users and the operator. */
export type AuditedCaller = ConsoleUserCaller | OperatorCaller;

export interface AuditChange {
  /** `noun.verb`, e.g. `api_key.create`. */
  action: string;
  /** Null for a change of the whole service (an operator token). */
  workspaceId: string | null;
  /** The id of what changed, when it has one. */
  target: string | null;
  /**
   * Values before and after the change; never secrets (keys, passwords, tokens) nor recipients'
   * personal data (phones, template data). URLs are kept without their query and fragment, where
   * webhook receivers often put a token.
   */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

function withoutUrlSecrets(values: Record<string, unknown> | null): string | null {
  if (values === null) return null;
  const kept = Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, name.endsWith('url') && typeof value === 'string' ? value.replace(/[?#].*$/s, '') : value]),
  );
  return JSON.stringify(kept);
}

/**
 * Writes one audit entry: who (the caller), what, when. It runs after the change has committed, so
 * a failure to write it is logged rather than thrown: answering an error for a send that was
 * already charged would invite the caller to send it again.
 */
export async function recordAudit(ctx: Context<AuditedCaller>, change: AuditChange): Promise<void> {
  try {
    await insertEntry(ctx, change);
  } catch (error) {
    ctx.log.error({ err: error, action: change.action, workspace_id: change.workspaceId, target: change.target }, 'audit entry not written');
  }
}

async function insertEntry(ctx: Context<AuditedCaller>, change: AuditChange): Promise<void> {
  const now = ctx.clock();
  const { caller } = ctx;
  await insertAuditEntry(ctx.store.db, {
    id: createSortableId('act', now),
    workspace_id: change.workspaceId,
    actor_kind: caller.kind,
    actor_id: caller.kind === 'console_user' ? caller.userId : (caller.tokenId ?? null),
    actor_label: caller.kind === 'console_user' ? caller.email : (caller.name ?? 'operator'),
    action: change.action,
    target: change.target,
    before_state: withoutUrlSecrets(change.before),
    after_state: withoutUrlSecrets(change.after),
    created_at: now,
  });
}

/** A workspace's audit log, newest first. */
export async function listAudit({ ctx, input }: VerbCall<AuditedCaller, { workspaceId: string; limit?: number; offset?: number }>): Promise<{ entries: AuditLogRow[]; hasMore: boolean }> {
  const limit = input.limit ?? 50;
  const rows = await listAuditEntries(ctx.store.db, input.workspaceId, { limit: limit + 1, offset: input.offset ?? 0 });
  return { entries: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** The operator's audit log: every workspace's changes and the service's own, newest first. */
export async function listOperatorAudit({ ctx, input }: VerbCall<OperatorCaller, { workspaceId?: string; limit?: number; offset?: number }>): Promise<{ entries: AuditLogRow[]; hasMore: boolean }> {
  const limit = input.limit ?? 50;
  const rows = await listAllAuditEntries(ctx.store.db, { workspaceId: input.workspaceId }, { limit: limit + 1, offset: input.offset ?? 0 });
  return { entries: rows.slice(0, limit), hasMore: rows.length > limit };
}
