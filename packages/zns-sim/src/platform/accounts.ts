/** Official accounts (OAs): what the platform keeps for each, built from the seed, and their control-API view. */
import { createHash } from 'node:crypto';
import type { RsaKey } from '../rsa.ts';
import type { SeedOa, SeedPromotionQuota } from '../seed.ts';
import { pruneAccessTokens, type RefreshTokenRecord } from './oauth-tokens.ts';
import { accountOr404, type Platform } from './platform-state.ts';
import { quotaView, type QuotaView } from './quota.ts';

export interface OaState {
  readonly oa_id: string;
  readonly name: string;
  readonly app_id: string;
  readonly app_secret: string;
  oa_secret_key: string;
  daily_quota: number;
  /** `daily_quota` as the wire carries it, made once rather than on every send. */
  dailyQuotaText: string;
  /** Sends counted against the daily quota on `quotaDay`. */
  usedToday: number;
  /** The Vietnam day number (days since the epoch at UTC+7) that `usedToday` counts. */
  quotaDay: number;
  promotionQuota: SeedPromotionQuota | null;
  /** Phones that may receive development-mode sends. */
  readonly devAdmins: Set<string>;
  /** The same phones hashed, for development-mode hashphone sends. */
  readonly devAdminHashes: Set<string>;
  allowSendingMode3: boolean;
  rsaKey: RsaKey | null;
  generatingRsaKey: boolean;
  refreshToken: RefreshTokenRecord | null;
  /** Its access tokens; expired ones linger until the next prune. */
  readonly accessTokens: Set<string>;
}

export interface OaView extends QuotaView {
  name: string;
  app_id: string;
  oa_secret_key: string;
  refresh_token: string | null;
  refresh_token_expires_at: number | null;
  access_tokens_valid: number;
  rsa_key: boolean;
  allow_sending_mode_3: boolean;
  dev_admins: string[];
}

const DEFAULT_DAILY_QUOTA = 5000;

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The OA as the seed describes it, without tokens or RSA key (create-platform.ts adds those). */
export function accountFromSeed(seed: SeedOa, quotaDay: number): OaState {
  const dailyQuota = seed.daily_quota ?? DEFAULT_DAILY_QUOTA;
  return {
    oa_id: seed.oa_id,
    name: seed.name,
    app_id: seed.app_id,
    app_secret: seed.app_secret,
    oa_secret_key: seed.oa_secret_key,
    daily_quota: dailyQuota,
    dailyQuotaText: String(dailyQuota),
    usedToday: 0,
    quotaDay,
    promotionQuota: seed.promotion_quota ?? null,
    devAdmins: new Set(seed.dev_admins ?? []),
    devAdminHashes: new Set((seed.dev_admins ?? []).map(sha256Hex)),
    allowSendingMode3: seed.allow_sending_mode_3 ?? false,
    rsaKey: null,
    generatingRsaKey: false,
    refreshToken: null,
    accessTokens: new Set(),
  };
}

export function oaView(platform: Platform, oaId: string): OaView {
  const oa = accountOr404(platform, oaId);
  pruneAccessTokens(platform, oa);
  return {
    ...quotaView(platform, oa),
    name: oa.name,
    app_id: oa.app_id,
    oa_secret_key: oa.oa_secret_key,
    refresh_token: oa.refreshToken?.token ?? null,
    refresh_token_expires_at: oa.refreshToken?.expiresAt ?? null,
    access_tokens_valid: oa.accessTokens.size,
    rsa_key: oa.rsaKey !== null,
    allow_sending_mode_3: oa.allowSendingMode3,
    dev_admins: [...oa.devAdmins],
  };
}

export function oaViews(platform: Platform): OaView[] {
  return [...platform.accounts.keys()].map((oaId) => oaView(platform, oaId));
}
