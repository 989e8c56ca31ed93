/** What several operator verbs check before they read or write. */
import { wholeNumberProblem } from '../../lib/limits.ts';
import type { WorkspaceRow } from '../../store/schema.ts';
import { findWorkspace } from '../../store/workspaces.ts';
import type { Context } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';

export async function requireWorkspace(ctx: Context, id: string): Promise<WorkspaceRow> {
  const workspace = await findWorkspace(ctx.store.db, id);
  if (!workspace) throw new ApiError('workspace_not_found', `workspace ${id} not found`);
  return workspace;
}

/** The key secrets are encrypted with; a process without one cannot store any. */
export function requireMasterKey(ctx: Context): Buffer {
  const key = ctx.parts.config.masterKey;
  if (!key) throw new ApiError('internal_error', 'TMS_MASTER_KEY is not configured');
  return key;
}

/**
 * Whole numbers the operator sets are checked here too, not only by the request schemas: `tms
 * admin` calls these verbs directly, and a value out of a column's range must never be written.
 */
export function requireWholeNumber(value: number, name: string, minimum: number, maximum: number): void {
  const problem = wholeNumberProblem(value, name, minimum, maximum);
  if (problem) throw badRequest(problem);
}
