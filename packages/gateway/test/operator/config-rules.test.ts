/**
 * Configuration rules that join two variables (README, Configuration): each is refused naming the
 * variable to change, and the boundary value itself is accepted.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { configErrorOf } from './config-refusal.ts';

describe('rules joining two variables', () => {
  it('needs the webhook lease to outlast an attempt by 2 s', () => {
    expect(parseConfig({ TMS_WEBHOOK_TIMEOUT_MS: '5000', TMS_WEBHOOK_LEASE_MS: '7000' }).webhooks).toMatchObject({ timeoutMs: 5000, leaseMs: 7000 });
    const error = configErrorOf({ TMS_WEBHOOK_TIMEOUT_MS: '5000', TMS_WEBHOOK_LEASE_MS: '6999' });
    expect(error.variable).toBe('TMS_WEBHOOK_LEASE_MS');
    expect(error.message).toBe('Invalid configuration: TMS_WEBHOOK_LEASE_MS must be at least TMS_WEBHOOK_TIMEOUT_MS + 2000 (7000), got 6999');
    // The default lease (2 min) is too short for the longest attempt allowed.
    expect(configErrorOf({ TMS_WEBHOOK_TIMEOUT_MS: '120000' }).variable).toBe('TMS_WEBHOOK_LEASE_MS');
  });

  it('needs the request headers to be due no later than the whole request', () => {
    expect(parseConfig({ TMS_HTTP_REQUEST_TIMEOUT_MS: '5000', TMS_HTTP_HEADERS_TIMEOUT_MS: '5000' }).http).toMatchObject({ requestTimeoutMs: 5000, headersTimeoutMs: 5000 });
    const error = configErrorOf({ TMS_HTTP_REQUEST_TIMEOUT_MS: '5000', TMS_HTTP_HEADERS_TIMEOUT_MS: '5001' });
    expect(error.variable).toBe('TMS_HTTP_HEADERS_TIMEOUT_MS');
    expect(error.message).toBe('Invalid configuration: TMS_HTTP_HEADERS_TIMEOUT_MS must not exceed TMS_HTTP_REQUEST_TIMEOUT_MS (5000), got 5001');
    // The default headers timeout (10 s) is longer than the shortest request timeout allowed.
    expect(configErrorOf({ TMS_HTTP_REQUEST_TIMEOUT_MS: '1000' }).variable).toBe('TMS_HTTP_HEADERS_TIMEOUT_MS');
  });

  it('reads TMS_PG_POOL_SIZE only with DATABASE_URL, so embedded mode ignores it', () => {
    expect(parseConfig({ TMS_PG_POOL_SIZE: '0' }).database.kind).toBe('sqlite');
    expect(configErrorOf({ TMS_PG_POOL_SIZE: '0', DATABASE_URL: 'postgres://db/tms', TMS_ADMIN_TOKEN: 'operator-token-0123456789', TMS_MASTER_KEY: 'ab'.repeat(32) }).variable).toBe(
      'TMS_PG_POOL_SIZE',
    );
  });

  it('checks a value on its own before the rules that join it to another', () => {
    expect(configErrorOf({ TMS_WEBHOOK_TIMEOUT_MS: '5000', TMS_WEBHOOK_LEASE_MS: 'soon' }).message).toContain('must be a whole number, got "soon"');
  });
});
