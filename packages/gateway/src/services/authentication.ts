import { safeEqual, sha256Hex } from '../lib/crypto.ts';
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

/**
 * API key authentication (section 5): SHA-256 lookup, cached for at most a few seconds so a
 * revocation or suspension reaches every node within 5 s (decisions.md).
 */
export class ApiKeyAuthenticator {
  private readonly cache: TtlCache<ApiKeyWithWorkspace | null>;

  constructor(
    private readonly store: Store,
    cacheMs: number,
    clock: () => number,
  ) {
    this.cache = new TtlCache(cacheMs, 50_000, clock);
  }

  async authenticate(presentedKey: string | undefined, scope: Scope): Promise<AuthenticatedKey> {
    if (!presentedKey) throw new ApiError(401, 'missing API key: send Authorization: Bearer <key> or X-API-Key: <key>');
    const hash = sha256Hex(presentedKey);
    const key = await this.cache.getOrLoad(hash, async () => (await findApiKeyByHash(this.store.db, hash)) ?? null);
    // The lookup is by hash; the constant-time compare guards against any index-timing signal.
    if (!key || !safeEqual(key.key_hash, hash) || key.revoked_at !== null) throw new ApiError(401, 'invalid or revoked API key');
    if (key.workspace_status !== 'active') throw new ApiError(403, 'workspace is suspended');
    const scopes = JSON.parse(key.scopes) as string[];
    if (!scopes.includes(scope)) throw new ApiError(403, `API key lacks the ${scope} scope`);
    return { workspaceId: key.workspace_id, apiKeyId: key.id, scopes, rateLimitPerSecond: key.rate_limit_per_second };
  }

  forgetAll(): void {
    this.cache.clear();
  }
}
