import type { Static } from 'typebox';
import { formatUtc } from '../../lib/vietnam-time.ts';
import type { SenderAccountRow } from '../../services/vocabulary.ts';
import type { SenderAccountSchema } from '../routes/admin/admin-schemas.ts';

/** A sender account as the operator sees it: whether its secrets are set, never the secrets. */
export function presentSenderAccount(row: SenderAccountRow): Static<typeof SenderAccountSchema> {
  return {
    oa_id: row.oa_id,
    workspace_id: row.workspace_id,
    name: row.name,
    default_mode: row.default_mode,
    daily_quota: row.daily_quota,
    status: row.status,
    token_problem: row.token_problem,
    has_oa_secret_key: row.encrypted_oa_secret_key !== null,
    app_id: row.app_id,
    rsa_public_key: row.rsa_public_key,
    created_at: formatUtc(row.created_at),
  };
}

export function presentSenderAccountList(rows: readonly SenderAccountRow[]) {
  return { sender_accounts: rows.map(presentSenderAccount), count: rows.length };
}
