/**
 * Bounds on whole numbers the gateway stores. Every one is checked before anything is written (by
 * the request schemas and again by the operator services, which the CLI also calls), so a stored
 * value always fits its column on both stores and is exact in JavaScript: a value out of range is
 * a 400, never a 500 and never a row that later reads fail on.
 */

/** PostgreSQL `integer` columns (template_type, rate limits) and paging offsets. */
export const MAX_INT32 = 2_147_483_647;

/**
 * The largest `limit` of one page of an operator list (/admin/v1 and `tms admin` alike): the
 * workspaces, a wallet's ledger, the audit log, delivery reports, a message search.
 */
export const MAX_OPERATOR_PAGE_SIZE = 500;

/** The largest `limit` of one page of a workspace's activity log (the console's and the operator's). */
export const MAX_ACTIVITY_PAGE_SIZE = 200;

/** The highest rate limit an API key may be given, requests per second. */
export const MAX_RATE_LIMIT_PER_SECOND = 1_000_000;

/**
 * Counts kept in `bigint` columns (message caps, daily quotas): the largest integer a JavaScript
 * number holds exactly, 2^53 − 1.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/**
 * The most a wallet may hold, in VND: 10^15, far above any real wallet, and exact both as a
 * JavaScript number and as a `bigint`. A top-up that would take the balance above it is refused.
 */
export const MAX_WALLET_BALANCE_VND = 1_000_000_000_000_000;

/**
 * The most one message may cost, in VND: 10^9. The total of any request (500 recipients) and of
 * any commit group (5,000 messages) stays far below 2^53, so every charge is exact.
 */
export const MAX_PRICE_VND = 1_000_000_000;

/** Null when `value` is a whole number in [minimum, maximum], otherwise why it is not. */
export function wholeNumberProblem(value: number, name: string, minimum: number, maximum: number): string | null {
  if (!Number.isSafeInteger(value) || value < minimum || value > maximum) {
    return `${name} must be a whole number from ${minimum} to ${maximum}`;
  }
  return null;
}
