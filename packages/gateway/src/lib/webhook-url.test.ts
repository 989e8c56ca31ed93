import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { NonPublicTargetError, publicOnlyLookup } from './webhook-transport.ts';
import { findWebhookUrlProblem, isNonPublicAddress } from './webhook-url.ts';

interface Range {
  block: string;
  /** Addresses inside the block: refused. */
  inside: string[];
  /** Public addresses just outside it (or the registry's reachable exceptions inside it): accepted. */
  neighbours: string[];
}

/** One row per special-purpose block (IANA IPv4 and IPv6 Special-Purpose Address Registries, multicast). */
const RANGES: Range[] = [
  { block: '0.0.0.0/8 this network', inside: ['0.0.0.0', '0.1.2.3', '0.255.255.255'], neighbours: ['1.0.0.1'] },
  { block: '10.0.0.0/8 private', inside: ['10.0.0.1', '10.255.255.255'], neighbours: ['9.255.255.255', '11.0.0.0'] },
  { block: '100.64.0.0/10 shared (CGNAT)', inside: ['100.64.0.1', '100.127.255.254'], neighbours: ['100.63.255.255', '100.128.0.0'] },
  { block: '127.0.0.0/8 loopback', inside: ['127.0.0.1', '127.255.255.254'], neighbours: ['126.255.255.255', '128.0.0.1'] },
  { block: '169.254.0.0/16 link-local', inside: ['169.254.169.254', '169.254.0.1'], neighbours: ['169.253.255.255', '169.255.0.1'] },
  { block: '172.16.0.0/12 private', inside: ['172.16.0.1', '172.31.255.255'], neighbours: ['172.15.255.255', '172.32.0.0'] },
  {
    block: '192.0.0.0/24 IETF protocol assignments',
    inside: ['192.0.0.1', '192.0.0.8', '192.0.0.170', '192.0.0.255'],
    neighbours: ['191.255.255.255', '192.0.1.0', '192.0.0.9', '192.0.0.10'],
  },
  { block: '192.0.2.0/24 TEST-NET-1', inside: ['192.0.2.1', '192.0.2.255'], neighbours: ['192.0.1.255', '192.0.3.0'] },
  { block: '192.31.196.0/24 AS112-v4', inside: ['192.31.196.1'], neighbours: ['192.31.195.255', '192.31.197.0'] },
  { block: '192.52.193.0/24 AMT', inside: ['192.52.193.1'], neighbours: ['192.52.192.255', '192.52.194.0'] },
  { block: '192.88.99.0/24 6to4 relay anycast', inside: ['192.88.99.1'], neighbours: ['192.88.98.255', '192.88.100.0'] },
  { block: '192.168.0.0/16 private', inside: ['192.168.0.1', '192.168.255.255'], neighbours: ['192.167.255.255', '192.169.0.0'] },
  { block: '192.175.48.0/24 AS112 direct delegation', inside: ['192.175.48.1'], neighbours: ['192.175.47.255', '192.175.49.0'] },
  { block: '198.18.0.0/15 benchmarking', inside: ['198.18.0.1', '198.19.255.255'], neighbours: ['198.17.255.255', '198.20.0.0'] },
  { block: '198.51.100.0/24 TEST-NET-2', inside: ['198.51.100.7'], neighbours: ['198.51.99.255', '198.51.101.0'] },
  { block: '203.0.113.0/24 TEST-NET-3', inside: ['203.0.113.9'], neighbours: ['203.0.112.255', '203.0.114.0'] },
  { block: '224.0.0.0/4 multicast', inside: ['224.0.0.1', '239.255.255.255'], neighbours: ['223.255.255.255'] },
  { block: '240.0.0.0/4 reserved, 255.255.255.255 broadcast', inside: ['240.0.0.1', '255.255.255.255'], neighbours: ['223.255.255.254'] },
  { block: '::/128 unspecified, ::1/128 loopback', inside: ['::', '::1'], neighbours: ['2606:4700:4700::1111'] },
  { block: '::/96 IPv4-compatible (deprecated), refused whatever it embeds', inside: ['::7f00:1', '::8.8.8.8', '::2'], neighbours: ['::ffff:8.8.8.8'] },
  {
    block: '::ffff:0:0/96 IPv4-mapped, judged by its IPv4 address',
    inside: ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a00:1', '::ffff:192.168.1.1', '::ffff:0.0.0.0', '::ffff:203.0.113.5', '::ffff:ffff:ffff'],
    neighbours: ['::ffff:8.8.8.8', '::ffff:808:808', '::ffff:192.0.0.9'],
  },
  {
    block: '64:ff9b::/96 NAT64, judged by its IPv4 address',
    inside: ['64:ff9b::10.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::198.51.100.1'],
    neighbours: ['64:ff9b::8.8.8.8', '64:ff9b::101:101'],
  },
  { block: '64:ff9b:1::/48 local-use translation', inside: ['64:ff9b:1::808:808', '64:ff9b:1:ffff::1'], neighbours: ['64:ff9b::8.8.8.8'] },
  { block: '100::/64 discard-only, 100:0:0:1::/64 dummy', inside: ['100::1', '100::ffff:ffff:ffff:ffff', '100:0:0:1::1'], neighbours: ['2606:4700:4700::1111'] },
  {
    block: '2001::/23 IETF protocol assignments (AMT, AS112, DET and the rest of the block)',
    inside: ['2001:1::4', '2001:3::1', '2001:4:112::1', '2001:30::1', '2001:1ff:ffff::1'],
    neighbours: ['2001:200::1', '2001:1::1', '2001:1::2', '2001:1::3'],
  },
  {
    block: '2001::/32 Teredo, refused whatever client it names',
    // Clients 10.0.0.1 and 8.8.8.8 (the last 32 bits are the client's IPv4 address XOR-ed with ffff:ffff).
    inside: ['2001::1', '2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    neighbours: ['2001:200::1'],
  },
  { block: '2001:2::/48 benchmarking', inside: ['2001:2::1', '2001:2:0:ffff::1'], neighbours: ['2001:200::1'] },
  { block: '2001:10::/28 ORCHID (deprecated)', inside: ['2001:10::1', '2001:1f:ffff::1'], neighbours: ['2001:200::1'] },
  { block: '2001:20::/28 ORCHIDv2', inside: ['2001:20::1', '2001:2f:ffff::1'], neighbours: ['2001:200::1'] },
  { block: '2001:db8::/32 documentation', inside: ['2001:db8::1', '2001:db8:ffff:ffff::1'], neighbours: ['2001:db7:ffff::1', '2001:db9::1'] },
  {
    block: '2002::/16 6to4, judged by the IPv4 address in bits 16-47',
    inside: ['2002:a00:1::1', '2002:7f00:1::', '2002:c0a8:101::1', '2002:a9fe:a9fe::', '2002:cb00:7109::1', '2002::1'],
    neighbours: ['2002:808:808::1', '2002:c000:9::1'],
  },
  { block: '2620:4f:8000::/48 AS112 direct delegation', inside: ['2620:4f:8000::1'], neighbours: ['2620:4f:7fff::1', '2620:4f:8001::1'] },
  { block: '3fff::/20 documentation', inside: ['3fff::1', '3fff:fff:ffff::1'], neighbours: ['3fff:1000::1', '3ffe:ffff::1'] },
  { block: '5f00::/16 SRv6 SIDs', inside: ['5f00::1', '5f00:ffff::1'], neighbours: ['2606:4700:4700::1111'] },
  { block: 'fc00::/7 unique local', inside: ['fc00::1', 'fd12:3456::1', 'fdff:ffff::1'], neighbours: ['2606:4700:4700::1111'] },
  { block: 'fe80::/10 link-local', inside: ['fe80::1', 'febf::1'], neighbours: ['2606:4700:4700::1111'] },
  { block: 'fec0::/10 site-local (deprecated)', inside: ['fec0::1', 'feff::1'], neighbours: ['2606:4700:4700::1111'] },
  { block: 'ff00::/8 multicast', inside: ['ff02::1', 'ff05::1:3', 'ffff::1'], neighbours: ['2606:4700:4700::1111'] },
];

const urlOf = (address: string) => (isIP(address) === 6 ? `http://[${address}]:8080/dlr` : `http://${address}:8080/dlr`);

function lookup(hostname: string, all: boolean): Promise<{ error: Error | null; address: unknown }> {
  return new Promise((resolve) => publicOnlyLookup(hostname, { all }, (error, address) => resolve({ error, address })));
}

describe.each(RANGES)('$block', ({ inside, neighbours }) => {
  it('is refused by the URL check, unless private targets are allowed', () => {
    for (const address of inside) {
      expect(isNonPublicAddress(address), address).toBe(true);
      expect(findWebhookUrlProblem(urlOf(address), false), address).toMatch(/private/);
      expect(findWebhookUrlProblem(urlOf(address), true), address).toBeNull();
    }
  });

  it('is refused by the connect-time DNS-answer check, in both calling forms', async () => {
    for (const address of inside) {
      for (const all of [false, true]) {
        const { error } = await lookup(address, all);
        expect(error, address).toBeInstanceOf(NonPublicTargetError);
      }
    }
  });

  it('leaves its public neighbours alone at both checks', async () => {
    for (const address of neighbours) {
      expect(isNonPublicAddress(address), address).toBe(false);
      expect(findWebhookUrlProblem(urlOf(address), false), address).toBeNull();
      expect((await lookup(address, false)).error, address).toBeNull();
      expect((await lookup(address, true)).error, address).toBeNull();
    }
  });
});

describe('findWebhookUrlProblem', () => {
  it('accepts public http(s) URLs', () => {
    expect(findWebhookUrlProblem('https://hooks.example.com/dlr', false)).toBeNull();
    expect(findWebhookUrlProblem('http://8.8.8.8:8080/dlr', false)).toBeNull();
    expect(findWebhookUrlProblem('https://[2606:4700:4700::1111]/dlr', false)).toBeNull();
  });

  it.each(['ftp://example.com/x', 'not a url', 'https://user:pass@example.com/x'])('refuses %s', (url) => {
    expect(findWebhookUrlProblem(url, false)).not.toBeNull();
  });

  // Every way of writing a non-public host that the URL parser turns into a literal address.
  it.each([
    'http://127.0.0.1/x',
    'http://2130706433/x',
    'http://0x7f000001/x',
    'http://0x7f.1/x',
    'http://0177.0.0.1/x',
    'http://017700000001/x',
    'http://127.1/x',
    'http://127.0.0.1./x',
    'http://127.0.0.%31/x',
    'http://１２７.０.０.１/x',
    'http://0/x',
    'http://0300.0250.0.1/x',
    'http://0xc0a80001/x',
    'http://3232235521/x',
    'http://10.1.2.3/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/x',
    'http://[0:0:0:0:0:0:0:1]/x',
    'http://[::]/x',
    'http://[::ffff:127.0.0.1]:8080/x',
    'http://[::FFFF:7F00:1]/x',
    'http://[0:0:0:0:0:ffff:169.254.169.254]/x',
    'http://[::127.0.0.1]/x',
    'http://[64:ff9b::169.254.169.254]/x',
    'http://[2002:a9fe:a9fe::1]/x',
    'http://[fd00::1]/x',
    'http://[FE80::1]/x',
    'http://localhost:3000/x',
    'http://LOCALHOST/x',
    'http://localhost./x',
    'http://hooks.localhost/x',
    'http://hooks.localhost../x',
  ])('refuses the non-public target %s unless allowed', (url) => {
    expect(findWebhookUrlProblem(url, false)).toMatch(/private/);
    expect(findWebhookUrlProblem(url, true)).toBeNull();
  });

  it('refuses a zone id in a URL host (the URL parser does not take one)', () => {
    expect(findWebhookUrlProblem('http://[fe80::1%25eth0]/x', false)).toMatch(/not a valid URL/);
    expect(findWebhookUrlProblem('http://[fe80::1%eth0]/x', true)).toMatch(/not a valid URL/);
  });

  it('accepts public addresses however they are written', () => {
    for (const url of ['http://134744072/x', 'http://0x8080808/x', 'http://8.8.2056/x', 'http://[::ffff:8.8.8.8]/x', 'http://[2002:808:808::]/x']) {
      expect(findWebhookUrlProblem(url, false), url).toBeNull();
    }
  });
});

describe('isNonPublicAddress', () => {
  it('judges a DNS answer with a zone id by its address', async () => {
    expect(isNonPublicAddress('fe80::1%eth0')).toBe(true);
    expect(isNonPublicAddress('fd00::1%2')).toBe(true);
    expect((await lookup('fe80::1%lo', true)).error).toBeInstanceOf(NonPublicTargetError);
  });

  it('is false for a host name, which only the connect-time check can judge', () => {
    expect(isNonPublicAddress('hooks.example.com')).toBe(false);
  });
});
