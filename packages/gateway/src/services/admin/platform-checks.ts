import { describePlatformError } from '../../platform/error-catalogue.ts';
import { PlatformUnavailableError, type ZnsResult } from '../../platform/zns-client.ts';
import { ApiError, type ErrorType } from '../errors.ts';

/**
 * What the operator verbs that ask the platform before storing anything (connecting a sender
 * account, registering a template) answer when the platform says no or cannot be asked. Nothing
 * is stored in either case; `verify: false` (`--no-verify`) is the escape for offline set-up.
 */
const OFFLINE_HINT = 'Retry, or set it up without the check (verify=false, --no-verify) if the platform cannot be reached from here.';

/** The platform's code with its message, or our catalogue's when it sent none. */
export function describePlatformAnswer(code: number, message: string): string {
  return `${code} ${message || describePlatformError(code, message).message}`;
}

export function platformUnavailable(what: string, cause: string, consequence = 'Nothing was stored.'): ApiError {
  return new ApiError('platform_unavailable', `could not ${what}: ${cause}. ${consequence} ${OFFLINE_HINT}`);
}

/** Throws a transport failure of the check as the operator's error; anything else as it is. */
export function rethrowAsUnavailable(what: string, error: unknown, consequence?: string): never {
  if (error instanceof PlatformUnavailableError) throw platformUnavailable(what, `the platform did not answer (${error.message})`, consequence);
  throw error;
}

/**
 * A platform refusal as the operator's error: `refused` for a definite no, platform_unavailable
 * for the platform's "try again later" codes.
 */
export function refusalOf(
  result: Extract<ZnsResult<unknown>, { ok: false }>,
  refused: ErrorType,
  what: string,
  explanation: string,
  consequence = 'Nothing was stored.',
): ApiError {
  const answer = describePlatformAnswer(result.code, result.message);
  if (describePlatformError(result.code, result.message).retry === 'backoff') return platformUnavailable(what, `the platform answered ${answer}`, consequence);
  return new ApiError(refused, `${explanation}: ${answer}. ${consequence}`);
}
