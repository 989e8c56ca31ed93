import type { Static } from 'typebox';
import { formatUtc, formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { CreatedApiKey } from '../../services/admin/api-keys.ts';
import type { TestReportResult } from '../../services/console/test-report.ts';
import type { ApiKeyRow } from '../../services/vocabulary.ts';
import type { ConsoleApiKeySchema, TestReportSchema } from '../routes/console/access-schemas.ts';

/** A key as its workspace's people see it: never the secret, and not the operator's settings. */
export function presentConsoleApiKey(row: ApiKeyRow): Static<typeof ConsoleApiKeySchema> {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    scopes: JSON.parse(row.scopes) as string[],
    webhook_url: row.webhook_url,
    created_at: formatUtc(row.created_at),
    revoked_at: formatUtcOrNull(row.revoked_at),
    last_used_at: formatUtcOrNull(row.last_used_at),
  };
}

/** A key just created: the one answer that carries its secret. */
export function presentCreatedConsoleApiKey(created: CreatedApiKey) {
  return { ...presentConsoleApiKey(created.row), key: created.secret };
}

export function presentConsoleApiKeyList(rows: readonly ApiKeyRow[]) {
  return { api_keys: rows.map(presentConsoleApiKey) };
}

export function presentTestReport(result: TestReportResult): Static<typeof TestReportSchema> {
  return {
    url: result.url,
    status_code: result.statusCode,
    latency_ms: result.latencyMs,
    response_body: result.responseBody,
    error: result.error,
    request_body: result.requestBody,
  };
}
