import { BlockList, isIP } from 'node:net';

type Block = readonly [network: string, prefix: number];

/**
 * IPv4 space a webhook may not reach by default: every block of the IANA IPv4 Special-Purpose
 * Address Registry that is not globally reachable, plus multicast. Also refused, although the
 * registry marks them reachable: whole blocks of anycast infrastructure (AS112 DNS sinks, AMT
 * relays, the deprecated 6to4 relay), where no webhook receiver lives.
 */
const IPV4_REFUSED: readonly Block[] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // AS112 direct delegation
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

/** Inside the refused blocks, the addresses the registry marks globally reachable. */
const IPV4_REACHABLE: readonly Block[] = [
  ['192.0.0.9', 32], // Port Control Protocol anycast
  ['192.0.0.10', 32], // TURN anycast
];

/**
 * IPv6 space refused by default: the IANA IPv6 Special-Purpose Address Registry's blocks that are
 * not globally reachable, and the deprecated, local and multicast scopes. 2001::/23 is refused
 * whole: that takes in Teredo (2001::/32), whose client address is only a NAT's mapping and which
 * no receiver should be behind, and ORCHIDv2 and DET identifiers, which are not routable locators.
 */
const IPV6_REFUSED: readonly Block[] = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard-only
  ['100:0:0:1::', 64], // dummy prefix
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112, DET
  ['2001:db8::', 32], // documentation
  ['2620:4f:8000::', 48], // AS112 direct delegation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing (SRv6) SIDs
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** Inside 2001::/23, the anycast addresses the registry marks globally reachable (PCP, TURN, DNS-SD SRP). */
const IPV6_REACHABLE: readonly Block[] = [
  ['2001:1::1', 128],
  ['2001:1::2', 128],
  ['2001:1::3', 128],
];

/**
 * IPv6 blocks whose next 32 bits carry an IPv4 address, written as their leading 16-bit groups:
 * such an address is judged by the IPv4 address it carries.
 */
const IPV4_CARRIERS: readonly (readonly string[])[] = [
  ['0', '0', '0', '0', '0', 'ffff'], // IPv4-mapped ::ffff:0:0/96
  ['64', 'ff9b', '0', '0', '0', '0'], // NAT64 well-known prefix 64:ff9b::/96
  ['2002'], // 6to4 2002::/16
];

/** The IPv6 block that carries the IPv4 block [network, prefix] after `carrier`. */
function carried(carrier: readonly string[], [network, prefix]: Block): Block {
  const [a = 0, b = 0, c = 0, d = 0] = network.split('.').map(Number);
  const groups = [...carrier, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
  return [groups.length < 8 ? `${groups.join(':')}::` : groups.join(':'), carrier.length * 16 + prefix];
}

function blockList(ipv4: readonly Block[], ipv6: readonly Block[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ipv4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of ipv6) list.addSubnet(network, prefix, 'ipv6');
  for (const carrier of IPV4_CARRIERS) {
    for (const block of ipv4) list.addSubnet(...carried(carrier, block), 'ipv6');
  }
  return list;
}

const REFUSED = blockList(IPV4_REFUSED, IPV6_REFUSED);
const REACHABLE = blockList(IPV4_REACHABLE, IPV6_REACHABLE);

/**
 * Is this IP address one a webhook may not reach by default (private, loopback, link-local,
 * documentation, multicast, reserved, or any of those carried in an IPv6 address)? A host name is
 * not an address: false.
 */
export function isNonPublicAddress(address: string): boolean {
  // BlockList matches nothing with a zone id (fe80::1%eth0); the zone does not change the scope.
  const bare = address.replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 0) return false;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  return REFUSED.check(bare, family) && !REACHABLE.check(bare, family);
}

/**
 * Checks a webhook URL as far as its text allows: http(s) only, and no non-public literal address
 * or localhost unless allowed. The host is judged as the URL parser normalised it, so 2130706433,
 * 0x7f.1, 0177.0.0.1 and [::ffff:127.0.0.1] are all 127.0.0.1. Returns the problem, or null.
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
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) {
    return 'webhook_url points at a private, loopback, link-local or reserved address, which is not allowed (see TMS_WEBHOOK_ALLOW_PRIVATE)';
  }
  return null;
}
