/**
 * The signed-in workspace's API keys, managed in the console with the operator's verbs
 * (services/admin/api-keys.ts), each change written to the activity log. The log holds what
 * changed, never a key itself.
 */
import { formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { ApiKeyRow } from '../../store/schema.ts';
import { changeApiKeyTracked, createApiKey, listApiKeys, type CreatedApiKey } from '../admin/api-keys.ts';
import { recordAudit } from '../audit.ts';
import type { Scope } from '../authentication.ts';
import type { ConsoleUserCaller, VerbCall } from '../context.ts';

export function listConsoleApiKeys({ ctx }: VerbCall<ConsoleUserCaller, Record<string, never>>): Promise<ApiKeyRow[]> {
  return listApiKeys({ ctx, input: { workspaceId: ctx.caller.workspaceId } });
}

/** A key of the caller's workspace; its secret is in this answer only. */
export async function createConsoleApiKey({ ctx, input }: VerbCall<ConsoleUserCaller, { name: string; scopes: Scope[]; webhook_url?: string | null }>): Promise<CreatedApiKey> {
  const workspaceId = ctx.caller.workspaceId;
  const created = await createApiKey({ ctx, input: { workspaceId, name: input.name, scopes: input.scopes, webhook_url: input.webhook_url ?? null } });
  const { row } = created;
  await recordAudit(ctx, {
    action: 'api_key.create',
    workspaceId,
    target: row.id,
    before: null,
    after: { name: row.name, key_prefix: row.key_prefix, scopes: JSON.parse(row.scopes) as string[], webhook_url: row.webhook_url },
  });
  return created;
}

/**
 * Renames a key or sets or removes (null) its webhook URL. The key's pending reports follow a new
 * URL, or are cancelled when it is removed, as when the operator changes it.
 */
export async function changeConsoleApiKey({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string; name?: string; webhook_url?: string | null }>): Promise<ApiKeyRow> {
  const { before, after } = await changeApiKeyTracked({ ctx, input: { id: input.id, name: input.name, webhook_url: input.webhook_url } });
  const fields = (['name', 'webhook_url'] as const).filter((field) => before[field] !== after[field]);
  if (fields.length > 0) {
    await recordAudit(ctx, {
      action: fields.includes('webhook_url') ? 'api_key.webhook_change' : 'api_key.rename',
      workspaceId: after.workspace_id,
      target: after.id,
      before: Object.fromEntries(fields.map((field) => [field, before[field]])),
      after: Object.fromEntries(fields.map((field) => [field, after[field]])),
    });
  }
  return after;
}

/** Revokes a key (401 everywhere within seconds); its pending reports are cancelled. */
export async function revokeConsoleApiKey({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string }>): Promise<ApiKeyRow> {
  const { before, after } = await changeApiKeyTracked({ ctx, input: { id: input.id, revoke: true } });
  if (before.revoked_at === null) {
    await recordAudit(ctx, {
      action: 'api_key.revoke',
      workspaceId: after.workspace_id,
      target: after.id,
      before: { revoked_at: null },
      after: { revoked_at: formatUtcOrNull(after.revoked_at) },
    });
  }
  return after;
}
