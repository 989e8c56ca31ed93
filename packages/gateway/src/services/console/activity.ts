import type { AuditLogRow } from '../../store/schema.ts';
import { requireWorkspace } from '../admin/preconditions.ts';
import { listAudit, type AuditedCaller } from '../audit.ts';
import type { VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';

/**
 * A workspace's activity log, newest first: for its owners (their own workspace only) and the
 * operator (any; an unknown workspace is 404).
 */
export async function readWorkspaceActivity({ ctx, input }: VerbCall<AuditedCaller, { workspaceId: string; limit?: number; offset?: number }>): Promise<{ entries: AuditLogRow[]; hasMore: boolean }> {
  if (ctx.caller.kind === 'console_user' && ctx.caller.workspaceId !== input.workspaceId) throw new ApiError('workspace_not_found', `workspace ${input.workspaceId} not found`);
  await requireWorkspace(ctx, input.workspaceId);
  return listAudit({ ctx, input });
}
