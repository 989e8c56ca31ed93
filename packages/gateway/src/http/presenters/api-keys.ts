import type { Static } from 'typebox';
import { formatUtc, formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { CreatedApiKey } from '../../services/admin/api-keys.ts';
import type { ApiKeyRow } from '../../services/vocabulary.ts';
import type { ApiKeySchema } from '../routes/admin/admin-schemas.ts';

/** An API key as the operator sees it: never its secret, only the prefix that identifies it. */
export function presentApiKey(row: ApiKeyRow): Static<typeof ApiKeySchema> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    key_prefix: row.key_prefix,
    scopes: JSON.parse(row.scopes) as string[],
    webhook_url: row.webhook_url,
    rate_limit_per_second: row.rate_limit_per_second,
    revoked_at: formatUtcOrNull(row.revoked_at),
    created_at: formatUtc(row.created_at),
  };
}

/** A key just created: the one answer that carries its secret. */
export function presentCreatedApiKey(created: CreatedApiKey) {
  return { ...presentApiKey(created.row), key: created.secret };
}

export function presentApiKeyList(rows: readonly ApiKeyRow[]) {
  return { api_keys: rows.map(presentApiKey), count: rows.length };
}
