import { MAX_COUNT } from '../../lib/limits.ts';
import type { WorkspaceRow } from '../../store/schema.ts';
import { insertWorkspace, listWorkspaces as selectWorkspaces, updateWorkspace } from '../../store/workspaces.ts';
import { recordAudit } from '../audit.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';
import { requireWholeNumber, requireWorkspace } from './preconditions.ts';

export interface NewWorkspace {
  name: string;
  message_cap?: number | null;
  is_demo?: boolean;
}

export async function createWorkspace({ ctx, input }: VerbCall<OperatorCaller, NewWorkspace>): Promise<WorkspaceRow> {
  if (input.message_cap !== undefined && input.message_cap !== null) requireWholeNumber(input.message_cap, 'message_cap', 0, MAX_COUNT);
  const row = await insertWorkspace(ctx.store.db, { name: input.name, messageCap: input.message_cap ?? null, isDemo: input.is_demo, now: ctx.clock() });
  await recordAudit(ctx, { action: 'workspace.create', workspaceId: row.id, target: row.id, before: null, after: { name: row.name, message_cap: row.message_cap } });
  return row;
}

/** One page of workspaces, newest first. */
export async function listWorkspaces({ ctx, input: page }: VerbCall<OperatorCaller, { limit?: number; offset?: number }>): Promise<WorkspaceRow[]> {
  return selectWorkspaces(ctx.store.db, { limit: page.limit ?? 100, offset: page.offset ?? 0 });
}

export async function getWorkspace({ ctx, input }: VerbCall<OperatorCaller, { id: string }>): Promise<WorkspaceRow> {
  return requireWorkspace(ctx, input.id);
}

export interface WorkspaceChanges {
  status?: WorkspaceRow['status'];
  message_cap?: number | null;
}

/** Suspends, resumes or re-caps a workspace; its keys see the change at once in this process. */
export async function changeWorkspace({ ctx, input }: VerbCall<OperatorCaller, { id: string } & WorkspaceChanges>): Promise<WorkspaceRow> {
  const { id, ...changes } = input;
  if (changes.message_cap !== undefined && changes.message_cap !== null) requireWholeNumber(changes.message_cap, 'message_cap', 0, MAX_COUNT);
  const before = await requireWorkspace(ctx, id);
  const row = await updateWorkspace(ctx.store.db, id, changes, ctx.clock());
  if (!row) throw new ApiError('workspace_not_found', `workspace ${id} not found`);
  ctx.parts.apiKeys.forgetAll();
  const fields = (['status', 'message_cap'] as const).filter((field) => before[field] !== row[field]);
  if (fields.length > 0) {
    const action = fields.includes('status') ? (row.status === 'suspended' ? 'workspace.suspend' : 'workspace.resume') : 'workspace.set_cap';
    const valuesOf = (workspace: WorkspaceRow) => Object.fromEntries(fields.map((field) => [field, workspace[field]]));
    await recordAudit(ctx, { action, workspaceId: id, target: id, before: valuesOf(before), after: valuesOf(row) });
  }
  return row;
}
