import type { QuotaToday } from '../../services/catalog.ts';
import type { MessageRow } from '../../services/vocabulary.ts';
import { presentQuota } from './catalog.ts';
import { presentMessage } from './messages.ts';

/** A message as its workspace's API shows it, with the workspace it belongs to (the operator looks across them). */
export function presentOperatorMessage(row: MessageRow) {
  return { workspace_id: row.workspace_id, ...presentMessage(row) };
}

export function presentOperatorMessageList(result: { messages: readonly MessageRow[]; hasMore: boolean }) {
  return { messages: result.messages.map(presentOperatorMessage), count: result.messages.length, has_more: result.hasMore };
}

export function presentWorkspaceQuota(workspaceId: string, quotas: readonly QuotaToday[]) {
  return { workspace_id: workspaceId, quotas: quotas.map(presentQuota), count: quotas.length };
}
