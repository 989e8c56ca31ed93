import { timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../lib/crypto.ts';
import { TtlCache } from '../lib/ttl-cache.ts';
import { findApiKeyByHash, type ApiKeyWithWorkspace } from '../store/api-keys.ts';
import type { Store } from '../store/database.ts';
import type { Caller } from './context.ts';
import { ApiError } from './errors.ts';

export const SCOPES = ['messages:send', 'messages:read', 'templates:read'] as const;
export type Scope = (typeof SCOPES)[number];

export interface AuthenticatedKey extends Caller {
  readonly rateLimitPerSecond: number | null;
}

interface CachedKey {
  row: ApiKeyWithWorkspace;
  hash: Buffer;
  caller: AuthenticatedKey;
}

function toCachedKey(row: ApiKeyWithWorkspace | undefined): CachedKey | null {
  if (!row) return null;
  const caller = { workspaceId: row.workspace_id, apiKeyId: row.id, scopes: JSON.parse(row.scopes) as string[], rateLimitPerSecond: row.rate_limit_per_second };
  return { row, hash: Buffer.from(row.key_hash, 'hex'), caller };
}

/**
 * API key authentication (docs/api.md, authentication): SHA-256 lookup, cached for at most a few seconds so a
 * revocation or suspension reaches every node within 5 s (docs/api.md).
 */
export class ApiKeyAuthenticator {
  private readonly cache: TtlCache<CachedKey | null>;

  constructor(
    private readonly store: Store,
    cacheMs: number,
    clock: () => number,
  ) {
    this.cache = new TtlCache(cacheMs, 50_000, clock);
  }

  async authenticate(presentedKey: string | undefined, scope: Scope): Promise<AuthenticatedKey> {
    if (!presentedKey) throw new ApiError('unauthenticated', 'missing API key: send Authorization: Bearer <key> or X-API-Key: <key>');
    const hash = sha256Hex(presentedKey);
    const key = await this.cache.getOrLoad(hash, async () => toCachedKey(await findApiKeyByHash(this.store.db, hash)));
    // The lookup is by hash; the constant-time compare guards against any index-timing signal.
    if (!key || !timingSafeEqual(key.hash, Buffer.from(hash, 'hex')) || key.row.revoked_at !== null) throw new ApiError('unauthenticated', 'invalid or revoked API key');
    if (key.row.workspace_status !== 'active') throw new ApiError('workspace_suspended', 'workspace is suspended');
    if (!key.caller.scopes.includes(scope)) throw new ApiError('forbidden_scope', `API key lacks the ${scope} scope`);
    return key.caller;
  }

  forgetAll(): void {
    this.cache.clear();
  }
}
