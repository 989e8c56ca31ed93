import { timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../lib/crypto.ts';
import type { AnonymousCaller, ApiKeyCaller, VerbCall } from './context.ts';
import { ApiError } from './errors.ts';

export const SCOPES = ['messages:send', 'messages:read', 'templates:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** The caller an API key proves, with its own rate limit (null: the process default). */
export interface AuthenticatedKey extends ApiKeyCaller {
  readonly rateLimitPerSecond: number | null;
}

/**
 * API key authentication (docs/api.md): the key must exist, be unrevoked, belong to an active
 * workspace and hold the scope. Lookups come from a cache that forgets within a few seconds.
 */
export async function authenticateApiKey({ ctx, input }: VerbCall<AnonymousCaller, { presentedKey: string | undefined; scope: Scope }>): Promise<AuthenticatedKey> {
  if (!input.presentedKey) throw new ApiError('unauthenticated', 'missing API key: send Authorization: Bearer <key> or X-API-Key: <key>');
  const hash = sha256Hex(input.presentedKey);
  const key = await ctx.parts.apiKeys.findByHash(hash);
  // The lookup is by hash; the constant-time compare guards against any index-timing signal.
  if (!key || !timingSafeEqual(key.hash, Buffer.from(hash, 'hex')) || key.row.revoked_at !== null) throw new ApiError('unauthenticated', 'invalid or revoked API key');
  if (key.row.workspace_status !== 'active') throw new ApiError('workspace_suspended', 'workspace is suspended');
  if (!key.scopes.includes(input.scope)) throw new ApiError('forbidden_scope', `API key lacks the ${input.scope} scope`);
  ctx.parts.apiKeys.recordUse(key.row.id);
  return { kind: 'api_key', workspaceId: key.row.workspace_id, apiKeyId: key.row.id, scopes: key.scopes, rateLimitPerSecond: key.row.rate_limit_per_second };
}
