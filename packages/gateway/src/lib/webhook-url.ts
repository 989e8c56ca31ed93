import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach by default: this host, private networks, link-local (cloud
 * metadata at 169.254.169.254), carrier-grade NAT, multicast and reserved space. IPv4-mapped IPv6
 * addresses (::ffff:10.0.0.1, also written ::ffff:a00:1) are checked as their IPv4 address.
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  // NAT64: the IPv4 address it embeds could be any of the above.
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Is this address private, loopback or link-local (a target webhooks may not reach by default)? */
export function isNonPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (version === 6) return NON_PUBLIC.check(address, 'ipv6');
  return false;
}

/**
 * Checks a webhook URL as far as its text allows: http(s) only, and no private, loopback or
 * link-local literal address or localhost unless allowed. Returns the problem, or null.
 */
export function findWebhookUrlProblem(text: string, allowPrivateTargets: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'webhook_url is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'webhook_url must use http or https';
  if (url.username || url.password) return 'webhook_url must not contain credentials';
  if (allowPrivateTargets) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) {
    return 'webhook_url points at a private, loopback or link-local address, which is not allowed (see TMS_WEBHOOK_ALLOW_PRIVATE)';
  }
  return null;
}
