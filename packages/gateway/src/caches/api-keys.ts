import { TtlCache } from '../lib/ttl-cache.ts';
import { findApiKeyByHash, type ApiKeyWithWorkspace } from '../store/api-keys.ts';
import type { Store } from '../store/database.ts';

/** An API key as authentication needs it: its row with the workspace's status, and its hash as bytes. */
export interface CachedApiKey {
  readonly row: ApiKeyWithWorkspace;
  readonly hash: Buffer;
  readonly scopes: readonly string[];
}

const MAX_CACHED_KEYS = 50_000;

/**
 * API keys by the SHA-256 of the presented secret, cached for at most a few seconds so a
 * revocation or suspension reaches every node within 5 s (docs/api.md). A miss is cached too,
 * so a flood of wrong keys does not reach the store.
 */
export class ApiKeyCache {
  private readonly cache: TtlCache<CachedApiKey | null>;

  constructor(
    private readonly store: Store,
    cacheMs: number,
    clock: () => number,
  ) {
    this.cache = new TtlCache(cacheMs, MAX_CACHED_KEYS, clock);
  }

  /** The key whose secret hashes to `hash`, or null. */
  findByHash(hash: string): Promise<CachedApiKey | null> {
    return this.cache.getOrLoad(hash, async () => {
      const row = await findApiKeyByHash(this.store.db, hash);
      return row ? { row, hash: Buffer.from(row.key_hash, 'hex'), scopes: JSON.parse(row.scopes) as string[] } : null;
    });
  }

  /** Drops every cached key after a change that must take effect in this process now. */
  forgetAll(): void {
    this.cache.clear();
  }
}
