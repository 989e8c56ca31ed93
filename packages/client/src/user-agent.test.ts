import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SDK_USER_AGENT, describeRuntime, withUserAgent } from './user-agent.ts';
import { SDK_VERSION } from './version.ts';

describe('User-Agent', () => {
  it('names the version in package.json (the build rewrites version.ts from it; a bump without a build fails here)', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(SDK_VERSION).toBe(manifest.version);
    expect(SDK_USER_AGENT).toBe(`tms-client-js/${manifest.version} (node v${process.versions.node})`);
  });

  it('names Deno and Bun rather than the Node compatibility they also advertise', () => {
    const nodeCompat = { process: { versions: { node: '22.0.0' } } };
    expect(describeRuntime({ ...nodeCompat, Deno: { version: { deno: '2.1.4' } } })).toBe('deno 2.1.4');
    expect(describeRuntime({ ...nodeCompat, Bun: { version: '1.1.38' } })).toBe('bun 1.1.38');
    expect(describeRuntime(nodeCompat)).toBe('node v22.0.0');
  });

  it("uses an edge runtime's own name, kept to what a header may carry, or says it does not know", () => {
    expect(describeRuntime({ navigator: { userAgent: 'Cloudflare-Workers' } })).toBe('Cloudflare-Workers');
    expect(describeRuntime({ navigator: { userAgent: 'Edge (beta)\r\n' } })).toBe('Edge beta');
    expect(describeRuntime({})).toBe('unknown runtime');
  });

  it("puts the caller's own User-Agent first, whatever its letter case, and sends the header once", () => {
    expect(withUserAgent({ 'User-Agent': 'shop-backend/2.0', 'x-tenant': 'a' })).toEqual({
      userAgent: `shop-backend/2.0 ${SDK_USER_AGENT}`,
      headers: { 'x-tenant': 'a' },
    });
    expect(withUserAgent({})).toEqual({ userAgent: SDK_USER_AGENT, headers: {} });
  });
});
