/** The platform's bookkeeping of OAuth tokens: access tokens, the single valid refresh token of each OA, new pairs. */
import { randomBytes } from 'node:crypto';
import type { OaState } from './accounts.ts';
import { stateChanged, type Platform } from './platform-state.ts';

export interface AccessTokenRecord {
  oa: OaState;
  expiresAt: number;
  /** The appsecret_proof this token needs, computed at its first use with a proof. */
  proof: string | null;
}

export interface RefreshTokenRecord {
  token: string;
  expiresAt: number;
}

export interface AuthorizationCodeRecord {
  oa: OaState;
  expiresAt: number;
  codeChallenge: string | null;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: string;
}

export function randomToken(prefix: string): string {
  return prefix + randomBytes(24).toString('base64url');
}

/** A refresh token that is valid for the seed's refresh_token_lifetime_s from now. */
export function newRefreshToken(platform: Platform, token: string): RefreshTokenRecord {
  return { token, expiresAt: platform.now() + platform.settings.refresh_token_lifetime_s * 1000 };
}

/** Makes `next` the OA's only valid refresh token (null: none). */
export function replaceRefreshToken(platform: Platform, oa: OaState, next: RefreshTokenRecord | null): void {
  if (oa.refreshToken) platform.refreshTokens.delete(oa.refreshToken.token);
  oa.refreshToken = next;
  if (next) platform.refreshTokens.set(next.token, oa);
}

/** Adds an access token valid for access_token_lifetime_s; returns when it expires. */
export function addAccessToken(platform: Platform, oa: OaState, token: string): number {
  const expiresAt = platform.now() + platform.settings.access_token_lifetime_s * 1000;
  platform.accessTokens.set(token, { oa, expiresAt, proof: null });
  oa.accessTokens.add(token);
  return expiresAt;
}

export function pruneAccessTokens(platform: Platform, oa: OaState): void {
  const now = platform.now();
  for (const token of oa.accessTokens) {
    const record = platform.accessTokens.get(token);
    if (!record || record.expiresAt <= now) {
      platform.accessTokens.delete(token);
      oa.accessTokens.delete(token);
    }
  }
}

/** Drops every access token of the OA, expired or not. */
export function forgetAccessTokens(platform: Platform, oa: OaState): void {
  for (const token of oa.accessTokens) platform.accessTokens.delete(token);
  oa.accessTokens.clear();
}

/** A new access token and a new refresh token that replaces the old one, stored before they are answered. */
export function issueTokenPair(platform: Platform, oa: OaState): TokenPair {
  pruneAccessTokens(platform, oa);
  const previous = oa.refreshToken;
  const accessToken = randomToken('sim-at-');
  const refreshToken = randomToken('sim-rt-');
  addAccessToken(platform, oa, accessToken);
  replaceRefreshToken(platform, oa, newRefreshToken(platform, refreshToken));
  try {
    stateChanged(platform, true);
  } catch (err) {
    // Not stored, so not issued: the old refresh token stays the valid one, as if the request never came.
    platform.accessTokens.delete(accessToken);
    oa.accessTokens.delete(accessToken);
    replaceRefreshToken(platform, oa, previous);
    throw err;
  }
  platform.counters.tokensIssued++;
  return { access_token: accessToken, refresh_token: refreshToken, expires_in: String(platform.settings.access_token_lifetime_s) };
}
