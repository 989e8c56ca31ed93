import { TtlCache } from '../lib/ttl-cache.ts';
import { findApiKeyByHash, recordApiKeyUse, type ApiKeyWithWorkspace } from '../store/api-keys.ts';
import type { Store } from '../store/database.ts';

/** An API key as authentication needs it: its row with the workspace's status, and its hash as bytes. */
export interface CachedApiKey {
  readonly row: ApiKeyWithWorkspace;
  readonly hash: Buffer;
  readonly scopes: readonly string[];
}

const MAX_CACHED_KEYS = 50_000;
/** last_used_at is a time for people ("used 3 minutes ago"): a minute's precision is plenty. */
const USE_RECORD_INTERVAL_MS = 60_000;

/**
 * API keys by the SHA-256 of the presented secret, cached for at most a few seconds so a
 * revocation or suspension reaches every node within 5 s (docs/api.md). A miss is cached too,
 * so a flood of wrong keys does not reach the store.
 */
export class ApiKeyCache {
  private readonly cache: TtlCache<CachedApiKey | null>;
  /** When this process last wrote each key's last_used_at. */
  private readonly useRecordedAt = new Map<string, number>();

  constructor(
    private readonly store: Store,
    cacheMs: number,
    private readonly clock: () => number,
  ) {
    this.cache = new TtlCache(cacheMs, MAX_CACHED_KEYS, clock);
  }

  /**
   * Notes that a key authenticated a request. Authentication is the hot path and must not pay a
   * write per request: the time is written at most once a minute per key by this process, and
   * without waiting for it. A failed write costs only a stale time: it is tried again on the key's
   * next use.
   */
  recordUse(keyId: string): void {
    const now = this.clock();
    const recorded = this.useRecordedAt.get(keyId);
    if (recorded !== undefined && now - recorded < USE_RECORD_INTERVAL_MS) return;
    if (this.useRecordedAt.size >= MAX_CACHED_KEYS) this.useRecordedAt.delete(this.useRecordedAt.keys().next().value as string);
    this.useRecordedAt.set(keyId, now);
    recordApiKeyUse(this.store.db, keyId, now).catch(() => this.useRecordedAt.delete(keyId));
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
