/**
 * Rules that join two variables, checked after each variable on its own. Each rule's summary is
 * added to its variable's Meaning in the README table.
 */
import type { VariableName, VariableValues } from './variables.ts';

export interface CrossFieldRule {
  /** The variable the error names. */
  readonly variable: VariableName;
  /** One sentence for the README. */
  readonly summary: string;
  /** The problem (completing "Invalid configuration: <variable> …"), or null when the values are fine. */
  readonly problem: (values: VariableValues) => string | null;
}

/** Time a webhook worker needs after an attempt ends to record its outcome under the same claim. */
const WEBHOOK_RECORDING_MARGIN_MS = 2000;

export const CROSS_FIELD_RULES: readonly CrossFieldRule[] = [
  // Several processes share one PostgreSQL database, so their secrets cannot be generated per node.
  {
    variable: 'TMS_ADMIN_TOKEN',
    summary: 'Required with `DATABASE_URL`',
    problem: (values) => (values.DATABASE_URL !== null && values.TMS_ADMIN_TOKEN === null ? 'is required when DATABASE_URL is set' : null),
  },
  {
    variable: 'TMS_MASTER_KEY',
    summary: 'Required with `DATABASE_URL`',
    problem: (values) => (values.DATABASE_URL !== null && values.TMS_MASTER_KEY === null ? 'is required when DATABASE_URL is set' : null),
  },
  // A claim must outlive the attempt it covers and its recording, or a live worker's delivery could be taken by another.
  {
    variable: 'TMS_WEBHOOK_LEASE_MS',
    summary: `At least \`TMS_WEBHOOK_TIMEOUT_MS\` + ${WEBHOOK_RECORDING_MARGIN_MS}`,
    problem: ({ TMS_WEBHOOK_LEASE_MS: leaseMs, TMS_WEBHOOK_TIMEOUT_MS: timeoutMs }) => {
      const least = timeoutMs + WEBHOOK_RECORDING_MARGIN_MS;
      return leaseMs < least ? `must be at least TMS_WEBHOOK_TIMEOUT_MS + ${WEBHOOK_RECORDING_MARGIN_MS} (${least}), got ${leaseMs}` : null;
    },
  },
  // Node requires the headers to arrive before the whole request is due.
  {
    variable: 'TMS_HTTP_HEADERS_TIMEOUT_MS',
    summary: 'At most `TMS_HTTP_REQUEST_TIMEOUT_MS`',
    problem: ({ TMS_HTTP_HEADERS_TIMEOUT_MS: headersMs, TMS_HTTP_REQUEST_TIMEOUT_MS: requestMs }) =>
      headersMs > requestMs ? `must not exceed TMS_HTTP_REQUEST_TIMEOUT_MS (${requestMs}), got ${headersMs}` : null,
  },
];
