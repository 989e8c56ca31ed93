/**
 * OAuth v4 as clients meet it: the token endpoint (refresh_token and authorization_code grants, PKCE) and the
 * `access_token` / `appsecret_proof` headers every business call carries.
 */
import { createHash, createHmac } from 'node:crypto';
import { OAUTH_ERRORS, znsError, type OAuthErrorBody, type ZnsErrorBody } from '../errors.ts';
import type { OaState } from './accounts.ts';
import { issueTokenPair, replaceRefreshToken, type TokenPair } from './oauth-tokens.ts';
import { stateChanged, type Platform } from './platform-state.ts';

/** POST /v4/oa/access_token. `form` is the parsed x-www-form-urlencoded body (null when the body was not a form). */
export function requestToken(platform: Platform, secretKey: string | undefined, form: Record<string, string> | null): OAuthErrorBody | TokenPair {
  const reject = (error: OAuthErrorBody): OAuthErrorBody => {
    platform.counters.tokenRejected++;
    return error;
  };
  if (!form) return reject(OAUTH_ERRORS.invalidRequest);
  const appId = form.app_id;
  if (!appId) return reject(OAUTH_ERRORS.invalidAppId);
  const secret = platform.appSecrets.get(appId);
  if (secret === undefined) return reject(OAUTH_ERRORS.invalidAppId);
  if (secretKey !== secret) return reject(OAUTH_ERRORS.invalidSecretKey);
  const grant = form.grant_type;
  if (grant === 'refresh_token') {
    const refreshToken = form.refresh_token;
    if (!refreshToken) return reject(OAUTH_ERRORS.invalidRequest);
    const oa = platform.refreshTokens.get(refreshToken);
    if (!oa || oa.app_id !== appId || !oa.refreshToken || oa.refreshToken.token !== refreshToken) return reject(OAUTH_ERRORS.invalidRefreshToken);
    if (oa.refreshToken.expiresAt <= platform.now()) {
      replaceRefreshToken(platform, oa, null);
      stateChanged(platform, false);
      return reject(OAUTH_ERRORS.invalidRefreshToken);
    }
    return issueTokenPair(platform, oa);
  }
  if (grant === 'authorization_code') {
    const code = form.code;
    if (!code) return reject(OAUTH_ERRORS.invalidRequest);
    const record = platform.authorizationCodes.get(code);
    if (!record || record.oa.app_id !== appId) return reject(OAUTH_ERRORS.invalidCode);
    platform.authorizationCodes.delete(code);
    if (record.expiresAt <= platform.now()) return reject(OAUTH_ERRORS.invalidCode);
    if (record.codeChallenge !== null) {
      const verifier = form.code_verifier ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== record.codeChallenge) return reject(OAUTH_ERRORS.invalidCodeVerifier);
    }
    return issueTokenPair(platform, record.oa);
  }
  return reject(OAUTH_ERRORS.invalidRequest);
}

/** Resolves the `access_token` header (and `appsecret_proof` when sent); returns the OA or the -124 / -1241 error body. */
export function authenticate(platform: Platform, token: string | undefined, proof: string | undefined): OaState | ZnsErrorBody {
  if (!token) {
    platform.counters.invalidAccessToken++;
    return znsError(-124);
  }
  const record = platform.accessTokens.get(token);
  if (!record || record.expiresAt <= platform.now()) {
    platform.counters.invalidAccessToken++;
    return znsError(-124);
  }
  if (proof !== undefined) {
    if (record.proof === null) record.proof = createHmac('sha256', record.oa.app_secret).update(token).digest('hex');
    if (proof.toLowerCase() !== record.proof) return znsError(-1241);
  }
  return record.oa;
}
