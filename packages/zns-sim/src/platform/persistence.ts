/** The platform's side of the state file (state.ts): what it writes and how it continues from what was written. */
import { rsaKeyFromPem } from '../rsa.ts';
import { STATE_FILE_MESSAGE_LIMIT, STATE_FILE_VERSION, type PersistedAccessToken, type PersistedMessage, type PersistedOa, type PersistedSend, type PersistedState } from '../state.ts';
import type { OaState } from './accounts.ts';
import { deliverAfter, storeMessage, type MessageRecord } from './messages.ts';
import { forgetAccessTokens, replaceRefreshToken } from './oauth-tokens.ts';
import type { Platform } from './platform-state.ts';
import { rollQuotaDay, setDailyQuota } from './quota.ts';

function persistedAccount(platform: Platform, oa: OaState, now: number): PersistedOa {
  const accessTokens: PersistedAccessToken[] = [];
  for (const token of oa.accessTokens) {
    const record = platform.accessTokens.get(token);
    if (record && record.expiresAt > now) accessTokens.push({ token, expires_at: record.expiresAt });
  }
  return {
    oa_id: oa.oa_id,
    refresh_token: oa.refreshToken?.token ?? null,
    refresh_token_expires_at: oa.refreshToken?.expiresAt ?? null,
    access_tokens: accessTokens,
    daily_quota: oa.daily_quota,
    quota_day: oa.quotaDay,
    used_today: oa.usedToday,
    rsa_private_key_pem: oa.rsaKey ? oa.rsaKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() : null,
  };
}

function persistedMessage(message: MessageRecord): PersistedMessage {
  return [message.id, message.oa.oa_id, message.recipient, message.phone, message.trackingId, message.sentTime, message.deliveryTime, message.neverDelivered];
}

/** A durable send's line in the sends journal: the message, and its OA's quota count with it. */
export function persistedSend(message: MessageRecord): PersistedSend {
  return [...persistedMessage(message), message.oa.quotaDay, message.oa.usedToday];
}

/** What the state file keeps (see state.ts): tokens, quota, RSA keys and the most recent messages. */
export function exportState(platform: Platform): PersistedState {
  const now = platform.now();
  const oas = [...platform.accounts.values()].map((oa) => persistedAccount(platform, oa, now));
  const messages: PersistedMessage[] = [];
  let skip = platform.messages.size - STATE_FILE_MESSAGE_LIMIT;
  for (const message of platform.messages.values()) {
    if (skip-- > 0) continue;
    messages.push(persistedMessage(message));
  }
  return { version: STATE_FILE_VERSION, saved_at: now, oas, messages };
}

function restoreAccount(platform: Platform, oa: OaState, saved: PersistedOa, now: number): void {
  const refreshToken = saved.refresh_token !== null && saved.refresh_token_expires_at !== null ? { token: saved.refresh_token, expiresAt: saved.refresh_token_expires_at } : null;
  replaceRefreshToken(platform, oa, refreshToken);
  forgetAccessTokens(platform, oa);
  for (const accessToken of saved.access_tokens) {
    if (accessToken.expires_at <= now) continue;
    platform.accessTokens.set(accessToken.token, { oa, expiresAt: accessToken.expires_at, proof: null });
    oa.accessTokens.add(accessToken.token);
  }
  setDailyQuota(oa, saved.daily_quota);
  oa.quotaDay = saved.quota_day;
  oa.usedToday = saved.used_today;
  rollQuotaDay(oa, now);
  oa.rsaKey = saved.rsa_private_key_pem === null ? null : rsaKeyFromPem(saved.rsa_private_key_pem);
}

/**
 * Continues from a saved state: for every OA of the seed that the state knows, its tokens, quota and RSA
 * key replace the seed's; OAs the seed no longer has are ignored. Messages not yet delivered are delivered
 * `events.delay_ms` from now (their delivery was due while the simulator was down).
 */
export function importState(platform: Platform, state: PersistedState): void {
  const now = platform.now();
  for (const saved of state.oas) {
    const oa = platform.accounts.get(saved.oa_id);
    if (oa) restoreAccount(platform, oa, saved, now);
  }
  for (const [id, oaId, recipient, phone, trackingId, sentTime, deliveryTime, neverDelivered] of state.messages) {
    const oa = platform.accounts.get(oaId);
    if (!oa) continue;
    const message: MessageRecord = { id, oa, recipient, phone, trackingId, sentTime, deliveryTime, neverDelivered };
    storeMessage(platform, message);
    if (deliveryTime === 0 && !neverDelivered) deliverAfter(platform, message, platform.settings.events.delay_ms);
  }
}
