/** Control-API changes to an OA's tokens: what expiry, revocation or the consent screen would do on the real platform. */
import { ControlError } from '../control-error.ts';
import { forgetAccessTokens, newRefreshToken, randomToken, replaceRefreshToken } from './oauth-tokens.ts';
import { accountOr404, stateChanged, type Platform } from './platform-state.ts';

/** Expires every access token of the OA now. Returns how many were valid. */
export function expireAccessTokens(platform: Platform, oaId: string): number {
  const oa = accountOr404(platform, oaId);
  const now = platform.now();
  let valid = 0;
  for (const token of oa.accessTokens) {
    const record = platform.accessTokens.get(token);
    if (record && record.expiresAt > now) valid++;
  }
  forgetAccessTokens(platform, oa);
  stateChanged(platform, true);
  return valid;
}

/** Kills the OA's current refresh token (as if it expired or the OA admin revoked the app). */
export function revokeRefreshToken(platform: Platform, oaId: string): void {
  const oa = accountOr404(platform, oaId);
  replaceRefreshToken(platform, oa, null);
  stateChanged(platform, true);
}

/** Sets a known refresh token for the OA (replacing the current one). */
export function setRefreshToken(platform: Platform, oaId: string, token: unknown): void {
  const oa = accountOr404(platform, oaId);
  if (typeof token !== 'string' || token.length === 0) throw new ControlError(400, 'refresh_token must be a non-empty string');
  const owner = platform.refreshTokens.get(token);
  if (owner && owner !== oa) throw new ControlError(409, 'refresh_token belongs to another OA');
  replaceRefreshToken(platform, oa, newRefreshToken(platform, token));
  stateChanged(platform, true);
}

/** Issues an OAuth authorization code for the OA (what the consent redirect would carry). */
export function issueAuthorizationCode(platform: Platform, oaId: string, codeChallenge?: unknown): { code: string; oa_id: string; expires_in: number } {
  const oa = accountOr404(platform, oaId);
  if (codeChallenge !== undefined && codeChallenge !== null && typeof codeChallenge !== 'string') throw new ControlError(400, 'code_challenge must be a string');
  const lifetimeSeconds = platform.settings.authorization_code_lifetime_s;
  const code = randomToken('sim-code-');
  platform.authorizationCodes.set(code, { oa, expiresAt: platform.now() + lifetimeSeconds * 1000, codeChallenge: typeof codeChallenge === 'string' ? codeChallenge : null });
  return { code, oa_id: oa.oa_id, expires_in: lifetimeSeconds };
}
