/**
 * The sender account named by a platform event, with its decrypted OA Secret Key, cached for
 * TMS_AUTH_CACHE_MS: every delivery event is verified with it, and reading and decrypting it per
 * event cost as much as applying the event. A reconnected account's new secret is used within that
 * time (an event refused meanwhile is retried by the platform). Unknown accounts and accounts
 * without a secret are not cached, so one connected just now is found at once.
 */
import { decryptSecret, type SecretKeys } from '../lib/crypto.ts';
import { TtlCache } from '../lib/ttl-cache.ts';
import type { Store } from '../store/database.ts';
import { findSenderAccountByOaId } from '../store/platform-events.ts';
import type { SenderAccountRow } from '../store/schema.ts';

export interface EventSigner {
  account: SenderAccountRow;
  /** The OA Secret Key in clear; null when the account has none (or no master key is configured). */
  secret: string | null;
}

const MAX_CACHED_SIGNERS = 10_000;

export class EventSigners {
  private readonly cache: TtlCache<EventSigner>;

  constructor(
    private readonly store: Store,
    private readonly masterKey: SecretKeys | null,
    cacheMs: number,
    clock: () => number,
  ) {
    this.cache = new TtlCache<EventSigner>(cacheMs, MAX_CACHED_SIGNERS, clock);
  }

  async signerOf(oaId: string): Promise<EventSigner | undefined> {
    const cached = this.cache.get(oaId);
    if (cached) return cached;
    const account = await findSenderAccountByOaId(this.store.db, oaId);
    if (!account) return undefined;
    const secret = account.encrypted_oa_secret_key !== null && this.masterKey ? decryptSecret(account.encrypted_oa_secret_key, this.masterKey) : null;
    const signer = { account, secret };
    // Only a usable signer is kept: an account given its secret just now is verified at once.
    if (signer.secret !== null) this.cache.set(oaId, signer);
    return signer;
  }
}
