import { isIP } from 'node:net';

function isPrivateIpv4(address: string): boolean {
  const [a = 0, b = 0] = address.split('.').map(Number);
  return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

function isPrivateIpv6(address: string): boolean {
  const lower = address.toLowerCase();
  if (lower === '::1' || lower === '::') return true;
  if (lower.startsWith('::ffff:')) return isPrivateIpv4(lower.slice(7));
  return /^(fc|fd|fe8|fe9|fea|feb)/.test(lower);
}

/** Is this address private, loopback or link-local (a target webhooks may not reach by default)? */
export function isNonPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return isPrivateIpv4(address);
  if (version === 6) return isPrivateIpv6(address);
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
