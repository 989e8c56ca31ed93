/**
 * The operator's support lookups: a customer's message or quota without the customer's API key.
 * Phones and template data are shown: the operator runs the service that holds them.
 */
import { MAX_INT32, MAX_OPERATOR_PAGE_SIZE } from '../../lib/limits.ts';
import { normalizePhone } from '../../lib/phone.ts';
import { findMessageInAnyWorkspace, listMessages } from '../../store/messages.ts';
import type { MessageRow } from '../../store/schema.ts';
import { listWorkspaces } from '../../store/workspaces.ts';
import { readQuotaOfWorkspace, type QuotaToday } from '../catalog.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { requireWholeNumber, requireWorkspace } from './preconditions.ts';

export async function findMessageAnywhere({ ctx, input }: VerbCall<OperatorCaller, { id: string }>): Promise<MessageRow> {
  const row = await findMessageInAnyWorkspace(ctx.store.db, input.id);
  if (!row) throw new ApiError('message_not_found', `message ${input.id} not found`);
  return row;
}

export interface MessageSearch {
  /** One workspace, or every workspace when absent. */
  workspaceId?: string;
  trackingId?: string;
  phone?: string;
  limit?: number;
}

const DEFAULT_SEARCH_LIMIT = 50;
const MAX_SEARCH_LIMIT = MAX_OPERATOR_PAGE_SIZE;

/**
 * Messages by tracking_id or phone (or both), newest first. Across workspaces it asks each
 * workspace in turn through the same (workspace_id, …) indexes the customers' own lists use, so no
 * index without the workspace is needed; a deployment has tens of workspaces, not millions.
 */
export async function searchMessages({ ctx, input }: VerbCall<OperatorCaller, MessageSearch>): Promise<{ messages: MessageRow[]; hasMore: boolean }> {
  if (input.trackingId === undefined && input.phone === undefined) throw badRequest('give a tracking_id or a phone to look for');
  const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
  requireWholeNumber(limit, 'limit', 1, MAX_SEARCH_LIMIT);
  const phone = input.phone === undefined ? undefined : normalizePhone(input.phone);
  if (phone === '') throw badRequest('phone is empty');
  const workspaceIds =
    input.workspaceId !== undefined ? [(await requireWorkspace(ctx, input.workspaceId)).id] : (await listWorkspaces(ctx.store.db, { limit: MAX_INT32, offset: 0 })).map((workspace) => workspace.id);
  const found: MessageRow[] = [];
  for (const workspaceId of workspaceIds) {
    found.push(...(await listMessages(ctx.store, workspaceId, { trackingId: input.trackingId, phone }, { limit, offset: 0 })));
  }
  found.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
  return { messages: found.slice(0, limit), hasMore: found.length > limit };
}

/** A workspace's quota today, per sender account: what its customers see at GET /api/v1/quota. */
export async function readWorkspaceQuota({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; oa_id?: string }>): Promise<QuotaToday[]> {
  await requireWorkspace(ctx, input.workspaceId);
  return readQuotaOfWorkspace(ctx, input.workspaceId, { oa_id: input.oa_id });
}
