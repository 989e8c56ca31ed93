import type { Static } from 'typebox';
import { formatUtc } from '../../lib/vietnam-time.ts';
import type { AuditLogRow } from '../../services/vocabulary.ts';
import type { ActivityEntrySchema } from '../routes/console/access-schemas.ts';

/** An audit entry's stored values (JSON text, or null), as the answers show them. */
export function stateOf(json: string | null): Record<string, unknown> | null {
  return json === null ? null : (JSON.parse(json) as Record<string, unknown>);
}

/** One change: who made it (a console user by e-mail address, or the operator), what, when. */
export function presentActivityEntry(row: AuditLogRow): Static<typeof ActivityEntrySchema> {
  return {
    id: row.id,
    at: formatUtc(row.created_at),
    // Which operator acted is the operator's business (tms admin audit); a workspace sees "the operator".
    actor: row.actor_kind === 'console_user' ? { kind: row.actor_kind, id: row.actor_id, email: row.actor_label } : { kind: row.actor_kind, id: null, email: null },
    action: row.action,
    target: row.target,
    before: stateOf(row.before_state),
    after: stateOf(row.after_state),
  };
}

export function presentActivity(page: { entries: readonly AuditLogRow[]; hasMore: boolean }) {
  return { entries: page.entries.map(presentActivityEntry), has_more: page.hasMore };
}

/** The operator's view: with a count, like the operator's other lists. */
export function presentActivityForOperator(page: { entries: readonly AuditLogRow[]; hasMore: boolean }) {
  return { entries: page.entries.map(presentActivityEntry), count: page.entries.length, has_more: page.hasMore };
}
