import type { AccessTokens } from '../caches/access-tokens.ts';
import { describePlatformError } from '../platform/error-catalogue.ts';
import type { ZnsResult } from '../platform/zns-client.ts';

/** What a call as a sender account needs of the access tokens (the process's own, `ctx.parts.accessTokens`). */
export type AccountTokens = Pick<AccessTokens, 'accessTokenFor' | 'reportRejected'>;

/**
 * The longest callAsAccount may take: twice an access token (each may wait for another process's
 * refresh, then refresh itself) and the operation, each platform call within `platformTimeoutMs`.
 */
export function longestAccountCallMs(tokens: Pick<AccessTokens, 'longestWaitMs'>, platformTimeoutMs: number): number {
  return 2 * (tokens.longestWaitMs + 2 * platformTimeoutMs);
}

/**
 * One platform call as a sender account. A refused access token is no verdict on the call: it is
 * reported, replaced (a token refresh) and the call made once more. Throws what accessTokenFor
 * throws (ReloginRequiredError, PlatformUnavailableError).
 */
export async function callAsAccount<T>(tokens: AccountTokens, oaId: string, operation: (token: string) => Promise<ZnsResult<T>>): Promise<ZnsResult<T>> {
  let token = await tokens.accessTokenFor(oaId);
  let result = await operation(token);
  if (!result.ok && describePlatformError(result.code, result.message).retry === 'refresh_token') {
    tokens.reportRejected(oaId, token);
    token = await tokens.accessTokenFor(oaId);
    result = await operation(token);
  }
  return result;
}
