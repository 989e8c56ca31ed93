import type { Static } from 'typebox';
import { formatUtc, formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { CreatedOperatorToken } from '../../services/operator-tokens.ts';
import type { AuditLogRow, OperatorTokenRow } from '../../services/vocabulary.ts';
import type { AuditEntrySchema, OperatorTokenSchema } from '../routes/admin/admin-schemas.ts';
import { stateOf } from './console-activity.ts';

export function presentOperatorToken(row: OperatorTokenRow): Static<typeof OperatorTokenSchema> {
  return { id: row.id, name: row.name, token_prefix: row.token_prefix, created_by: row.created_by, created_at: formatUtc(row.created_at), revoked_at: formatUtcOrNull(row.revoked_at) };
}

/** The one answer that holds the token itself. */
export function presentCreatedOperatorToken(created: CreatedOperatorToken) {
  return { ...presentOperatorToken(created.row), token: created.token };
}

export function presentOperatorTokenList(rows: readonly OperatorTokenRow[]) {
  return { operator_tokens: rows.map(presentOperatorToken), count: rows.length };
}

/** One audited change as the operator sees it: which operator (by name and token) or console user. */
export function presentAuditEntry(row: AuditLogRow): Static<typeof AuditEntrySchema> {
  return {
    id: row.id,
    at: formatUtc(row.created_at),
    workspace_id: row.workspace_id,
    actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_label },
    action: row.action,
    target: row.target,
    before: stateOf(row.before_state),
    after: stateOf(row.after_state),
  };
}

export function presentAuditPage(page: { entries: readonly AuditLogRow[]; hasMore: boolean }) {
  return { entries: page.entries.map(presentAuditEntry), count: page.entries.length, has_more: page.hasMore };
}
