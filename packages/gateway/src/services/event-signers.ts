/**
 * The sender account named by a platform event, with its decrypted OA Secret Key, cached for
 * TMS_AUTH_CACHE_MS: every delivery event is verified with it, and reading and decrypting it per
 * event cost as much as applying the event. A reconnected account's new secret is used within that
 * time (an event refused meanwhile is retried by the platform). Unknown accounts and accounts
 * without a secret are not cached, so one connected just now is found at once.
 */
import { decryptSecret } from '../lib/crypto.ts';
import { TtlCache } from '../lib/ttl-cache.ts';
import type { Store } from '../store/database.ts';
import { findSenderAccountByOaId } from '../store/platform-events.ts';
import type { SenderAccountRow } from '../store/schema.ts';
import type { Dependencies } from './context.ts';

export interface EventSigner {
  account: SenderAccountRow;
  /** The OA Secret Key in clear; null when the account has none (or no master key is configured). */
  secret: string | null;
}

const caches = new WeakMap<Store, TtlCache<EventSigner>>();

export async function eventSigner(deps: Pick<Dependencies, 'store' | 'config' | 'clock'>, oaId: string): Promise<EventSigner | undefined> {
  let cache = caches.get(deps.store);
  if (!cache) {
    cache = new TtlCache<EventSigner>(deps.config.authCacheMs, 10_000, deps.clock);
    caches.set(deps.store, cache);
  }
  const cached = cache.get(oaId);
  if (cached) return cached;
  const account = await findSenderAccountByOaId(deps.store.db, oaId);
  if (!account) return undefined;
  const { masterKey } = deps.config;
  const signer = { account, secret: account.encrypted_oa_secret_key !== null && masterKey ? decryptSecret(account.encrypted_oa_secret_key, masterKey) : null };
  // Only a usable signer is kept: an account given its secret just now is verified at once.
  if (signer.secret !== null) cache.set(oaId, signer);
  return signer;
}
