import { describe, expect, it } from 'vitest';
import { findWebhookUrlProblem, isNonPublicAddress } from './webhook-url.ts';

describe('findWebhookUrlProblem', () => {
  it('accepts public http(s) URLs', () => {
    expect(findWebhookUrlProblem('https://hooks.example.com/dlr', false)).toBeNull();
    expect(findWebhookUrlProblem('http://203.0.113.9:8080/dlr', false)).toBeNull();
  });

  it.each(['ftp://example.com/x', 'not a url', 'https://user:pass@example.com/x'])('refuses %s', (url) => {
    expect(findWebhookUrlProblem(url, false)).not.toBeNull();
  });

  it.each(['http://127.0.0.1/x', 'http://localhost:3000/x', 'http://10.1.2.3/x', 'http://192.168.1.1/x', 'http://169.254.169.254/x', 'http://[::1]/x', 'http://[fd00::1]/x'])(
    'refuses the non-public target %s unless allowed',
    (url) => {
      expect(findWebhookUrlProblem(url, false)).toMatch(/private/);
      expect(findWebhookUrlProblem(url, true)).toBeNull();
    },
  );
});

describe('isNonPublicAddress', () => {
  it('knows the private ranges', () => {
    expect(isNonPublicAddress('172.16.0.1')).toBe(true);
    expect(isNonPublicAddress('172.32.0.1')).toBe(false);
    expect(isNonPublicAddress('::ffff:10.0.0.1')).toBe(true);
    expect(isNonPublicAddress('8.8.8.8')).toBe(false);
  });
});

describe('isNonPublicAddress, every form', () => {
  it.each(['127.0.0.1', '127.1.2.3', '0.0.0.0', '100.64.0.1', '169.254.169.254', '224.0.0.1', '255.255.255.255', '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a00:1', 'fe80::1', 'fd12:3456::1', 'ff02::1', '64:ff9b::a00:1'])(
    '%s is not public',
    (address) => expect(isNonPublicAddress(address)).toBe(true),
  );

  it.each(['8.8.8.8', '203.0.113.9', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => expect(isNonPublicAddress(address)).toBe(false));

  it('refuses a URL written with an IPv4-mapped IPv6 literal', () => {
    expect(findWebhookUrlProblem('http://[::ffff:127.0.0.1]:8080/x', false)).toMatch(/private/);
  });
});
