/**
 * The User-Agent every request carries, `tms-client-js/0.1.0 (node v22.11.0)`: the service's
 * operators can tell which SDK version and runtime a customer runs when they read its logs. Found
 * through globals only (no node: import), so it works on every runtime the SDK supports.
 */
import { SDK_VERSION } from './version.ts';

/** The globals that name a runtime; each is absent on the runtimes that do not define it. */
export interface RuntimeGlobals {
  Deno?: { version?: { deno?: string } };
  Bun?: { version?: string };
  process?: { versions?: { node?: string } };
  navigator?: { userAgent?: string };
}

/** `node v22.11.0`, `deno 2.1.4`, `bun 1.1.38`, or what the runtime calls itself (`Cloudflare-Workers`). */
export function describeRuntime(globals: RuntimeGlobals): string {
  // Deno and Bun also define process.versions.node for compatibility, so they are asked first.
  if (globals.Deno?.version?.deno) return `deno ${globals.Deno.version.deno}`;
  if (globals.Bun?.version) return `bun ${globals.Bun.version}`;
  if (globals.process?.versions?.node) return `node v${globals.process.versions.node}`;
  // Kept to printable ASCII without parentheses, so the header stays valid and readable.
  const ownName = globals.navigator?.userAgent?.replace(/[^\x20-\x27\x2a-\x7e]/g, '').trim().slice(0, 64);
  return ownName || 'unknown runtime';
}

export const SDK_USER_AGENT = `tms-client-js/${SDK_VERSION} (${describeRuntime(globalThis as RuntimeGlobals)})`;

/**
 * Splits a caller's own User-Agent (any letter case) out of its extra headers. The caller's product
 * goes first and the SDK's follows (`my-app/2.0 tms-client-js/0.1.0 (node v22.11.0)`): both stay
 * visible, and the header is sent once.
 */
export function withUserAgent(headers: Record<string, string>): { userAgent: string; headers: Record<string, string> } {
  const rest: Record<string, string> = {};
  let callerAgent = '';
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'user-agent') callerAgent = value.trim();
    else rest[name] = value;
  }
  return { userAgent: callerAgent ? `${callerAgent} ${SDK_USER_AGENT}` : SDK_USER_AGENT, headers: rest };
}
