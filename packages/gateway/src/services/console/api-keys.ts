/**
 * The signed-in workspace's API keys, managed in the console with the operator's verbs
 * (services/admin/api-keys.ts), each change written to the activity log. The log holds what
 * changed, never a key itself.
 */
import type { ApiKeyRow } from '../../store/schema.ts';
import { changeApiKey, createApiKey, listApiKeys, type CreatedApiKey } from '../admin/api-keys.ts';
import type { Scope } from '../authentication.ts';
import type { ConsoleUserCaller, VerbCall } from '../context.ts';

export function listConsoleApiKeys({ ctx }: VerbCall<ConsoleUserCaller, Record<string, never>>): Promise<ApiKeyRow[]> {
  return listApiKeys({ ctx, input: { workspaceId: ctx.caller.workspaceId } });
}

/** A key of the caller's workspace; its secret is in this answer only. The shared verb writes the activity log. */
export async function createConsoleApiKey({ ctx, input }: VerbCall<ConsoleUserCaller, { name: string; scopes: Scope[]; webhook_url?: string | null }>): Promise<CreatedApiKey> {
  return createApiKey({ ctx, input: { workspaceId: ctx.caller.workspaceId, name: input.name, scopes: input.scopes, webhook_url: input.webhook_url ?? null } });
}

/**
 * Renames a key or sets or removes (null) its webhook URL. The key's pending reports follow a new
 * URL, or are cancelled when it is removed, as when the operator changes it.
 */
export async function changeConsoleApiKey({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string; name?: string; webhook_url?: string | null }>): Promise<ApiKeyRow> {
  return changeApiKey({ ctx, input: { id: input.id, name: input.name, webhook_url: input.webhook_url } });
}

/** Revokes a key (401 everywhere within seconds); its pending reports are cancelled. */
export async function revokeConsoleApiKey({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string }>): Promise<ApiKeyRow> {
  return changeApiKey({ ctx, input: { id: input.id, revoke: true } });
}
