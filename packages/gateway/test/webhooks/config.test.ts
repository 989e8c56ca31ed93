/**
 * The webhook sender's settings (README, configuration): the contract's values by default, every
 * one overridable (tests shorten the retry ladder), and a bad value stops start-up naming it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/config.ts';

describe('webhook settings', () => {
  it('default to the contract: retries after 1 s, 5 s, 30 s, 2 min, 10 min; 30 s per attempt', () => {
    expect(parseConfig({}).webhooks).toEqual({
      retryDelaysMs: [1000, 5000, 30_000, 120_000, 600_000],
      timeoutMs: 30_000,
      concurrency: 1000,
      receiverConcurrency: 64,
      leaseMs: 120_000,
      batchSize: 500,
      idlePollMs: 250,
      retentionDays: 30,
    });
    expect(Object.isFrozen(parseConfig({}).webhooks)).toBe(true);
    expect(parseConfig({}).allowPrivateWebhookTargets).toBe(false);
  });

  it('reads every variable', () => {
    const config = parseConfig({
      TMS_WEBHOOK_RETRY_DELAYS_MS: '100, 200,300',
      TMS_WEBHOOK_TIMEOUT_MS: '1000',
      TMS_WEBHOOK_CONCURRENCY: '20',
      TMS_WEBHOOK_RECEIVER_CONCURRENCY: '2',
      TMS_WEBHOOK_LEASE_MS: '3000',
      TMS_WEBHOOK_BATCH_SIZE: '50',
      TMS_WEBHOOK_POLL_MS: '20',
      TMS_WEBHOOK_RETENTION_DAYS: '7',
    });
    expect(config.webhooks).toEqual({ retryDelaysMs: [100, 200, 300], timeoutMs: 1000, concurrency: 20, receiverConcurrency: 2, leaseMs: 3000, batchSize: 50, idlePollMs: 20, retentionDays: 7 });
  });

  it.each([
    ['TMS_WEBHOOK_RETRY_DELAYS_MS', '1s,5s'],
    ['TMS_WEBHOOK_RETRY_DELAYS_MS', '1000,,5000'],
    ['TMS_WEBHOOK_RETRY_DELAYS_MS', '-1'],
    ['TMS_WEBHOOK_RETRY_DELAYS_MS', Array.from({ length: 21 }, () => '1').join(',')],
    ['TMS_WEBHOOK_TIMEOUT_MS', '0'],
    ['TMS_WEBHOOK_CONCURRENCY', 'many'],
    ['TMS_WEBHOOK_RECEIVER_CONCURRENCY', '0'],
    ['TMS_WEBHOOK_LEASE_MS', '31000'],
    ['TMS_WEBHOOK_RETENTION_DAYS', '0'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => parseConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value })).toThrow(name);
  });
});
