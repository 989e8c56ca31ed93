/**
 * The client's test harness: the real gateway (`tms start`: API and workers, SQLite in a temp data
 * directory) and the real ZNS simulator (`tms-zns-sim`), each as its own process on a free loopback
 * port, exactly as an integrator's SDK meets them. Provisioning goes through the operator API
 * (/admin/v1) over HTTP. The client imports no gateway or simulator code: it only knows their
 * command lines and HTTP interfaces.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../test/ports.ts';

export { freePort };

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GATEWAY_BIN = join(REPO_ROOT, 'packages/gateway/bin/tms.js');
const SIMULATOR_BIN = join(REPO_ROOT, 'packages/zns-sim/bin/tms-zns-sim.js');
export const CLIENT_BIN = join(REPO_ROOT, 'packages/client/bin/tms-client.js');

/** tsx start-up on a busy 2-core machine can take several seconds. */
const START_TIMEOUT_MS = 60_000;

/** The parent's environment without anything that configures TMS, plus what the test gives. */
export function childEnvironment(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (name.startsWith('TMS_') || ['DATABASE_URL', 'PORT', 'HOST', 'NODE_OPTIONS', 'ZNS_API_URL', 'ZNS_OAUTH_URL'].includes(name)) continue;
    base[name] = value;
  }
  return { ...base, ...env };
}

// ---------------------------------------------------------------------------------------------
// The simulator's world: sender accounts (OAs), each with its own app, secrets and two templates.

export interface SeedOa {
  /** 1, 2, … : picks the ids below. */
  n: number;
  dailyQuota: number;
}

export const oaId = (n: number) => `43182697201893${String(n).padStart(5, '0')}`;
/** OTP template of OA n: one param `otp`, 4 to 10 characters. */
export const otpTemplate = (n: number) => `2${String(n).padStart(2, '0')}002`;
/** Order template of OA n: customer_name, order_code (required), note (optional, ≤ 20). */
export const orderTemplate = (n: number) => `2${String(n).padStart(2, '0')}001`;

function secretsOf(n: number) {
  return {
    app_id: `20741381203726${String(n).padStart(5, '0')}`,
    app_secret: `app-secret-${n}`,
    oa_secret_key: `oa-secret-key-${n}`,
    refresh_token: `refresh-token-${n}`,
  };
}

const OTP_PARAMS = [{ name: 'otp', type: 'STRING', required: true, min_length: 4, max_length: 10 }];
const ORDER_PARAMS = [
  { name: 'customer_name', type: 'STRING', required: true, min_length: 1, max_length: 30 },
  { name: 'order_code', type: 'STRING', required: true, min_length: 1, max_length: 30 },
  { name: 'note', type: 'STRING', required: false, min_length: 0, max_length: 20 },
];

function simulatorSeed(oas: SeedOa[], eventsUrl: string) {
  return {
    settings: { events: { url: eventsUrl, delay_ms: 50, retry_delays_ms: [200, 500, 1000] } },
    oas: oas.map(({ n, dailyQuota }) => ({
      oa_id: oaId(n),
      name: `Test OA ${n}`,
      ...secretsOf(n),
      daily_quota: dailyQuota,
      templates: [
        { template_id: otpTemplate(n), name: 'One-time password', template_type: 2, price: '250', params: OTP_PARAMS },
        { template_id: orderTemplate(n), name: 'Order confirmation', template_type: 1, price: '300', params: ORDER_PARAMS.map((p) => ({ ...p, accept_null: !p.required })) },
      ],
    })),
    // Numbers ending in 000 are not Zalo users (-118, the message fails and is refunded).
    recipient_rules: [{ suffix: '000', result: 'error', error: -118 }],
  };
}

// ---------------------------------------------------------------------------------------------
// Processes.

interface Running {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<Running>();

function startProcess(bin: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [bin, ...args], { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const handle: Running = {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      running.delete(handle);
    },
  };
  running.add(handle);
  return handle;
}

async function waitUntilReady(url: string, process: Running, what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (process.child.exitCode !== null) throw new Error(`${what} exited before it was ready:\n${process.output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not become ready at ${url}:\n${process.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---------------------------------------------------------------------------------------------
// The stack.

export interface Workspace {
  id: string;
  apiKey: string;
  keyId: string;
}

export interface ProvisionOptions {
  name?: string;
  /** VND; default 1,000,000. */
  balance?: number;
  /** Sender accounts to connect (each OA of the seed can belong to one workspace only: refresh tokens are single-use). */
  oas: { n: number; dailyQuota: number }[];
  scopes?: string[];
  webhookUrl?: string | null;
  rateLimitPerSecond?: number | null;
}

export interface Stack {
  gatewayUrl: string;
  simulatorUrl: string;
  /** Calls /admin/v1 with the operator token; throws unless 2xx. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** Calls the simulator's /_control API; throws unless 2xx. */
  control(method: string, path: string, body?: unknown): Promise<any>;
  provision(options: ProvisionOptions): Promise<Workspace>;
  /** The OA's RSA public key (PEM), as the console would show it. */
  rsaPublicKey(n: number): Promise<string>;
  close(): Promise<void>;
}

async function jsonCall(url: string, method: string, headers: Record<string, string>, body: unknown): Promise<any> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} → ${response.status}: ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

export async function startStack(options: { oas: SeedOa[]; gatewayEnv?: Record<string, string> }): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'tms-client-test-'));
  const [gatewayPort, simulatorPort] = [await freePort(), await freePort()];
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
  const seedFile = join(dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify(simulatorSeed(options.oas, `${gatewayUrl}/platform/zns/events`)));

  const simulator = startProcess(SIMULATOR_BIN, ['--port', String(simulatorPort), '--seed', seedFile], {});
  const adminToken = `admin-${randomBytes(16).toString('hex')}`;
  const gateway = startProcess(GATEWAY_BIN, ['start'], {
    TMS_DATA_DIR: join(dir, 'data'),
    HOST: '127.0.0.1',
    PORT: String(gatewayPort),
    TMS_ADMIN_TOKEN: adminToken,
    TMS_MASTER_KEY: randomBytes(32).toString('hex'),
    TMS_DEMO_SEED: 'false',
    TMS_WEBHOOK_ALLOW_PRIVATE: 'true',
    TMS_LOG_LEVEL: 'warn',
    TMS_RATE_LIMIT_PER_SECOND: '10000',
    TMS_RATE_LIMIT_BURST: '10000',
    TMS_DISPATCH_POLL_MS: '50',
    TMS_DISPATCH_BACKOFF_MS: '50',
    TMS_TEMPLATE_SYNC_MS: '0',
    ZNS_OAUTH_URL: simulatorUrl,
    ZNS_API_URL: simulatorUrl,
    ZNS_TIMEOUT_MS: '5000',
    ...options.gatewayEnv,
  });
  const close = async () => {
    await Promise.all([gateway.stop(), simulator.stop()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all([waitUntilReady(`${simulatorUrl}/_control/stats`, simulator, 'the simulator'), waitUntilReady(`${gatewayUrl}/readyz`, gateway, 'the gateway')]);
  } catch (error) {
    await close();
    throw error;
  }

  const admin = (method: string, path: string, body?: unknown) => jsonCall(`${gatewayUrl}/admin/v1${path}`, method, { authorization: `Bearer ${adminToken}` }, body);
  const control = (method: string, path: string, body?: unknown) => jsonCall(`${simulatorUrl}/_control${path}`, method, {}, body);

  return {
    gatewayUrl,
    simulatorUrl,
    admin,
    control,
    rsaPublicKey: async (n) => (await control('GET', `/oas/${oaId(n)}/rsa-key`)).pem,
    provision: async (provision) => {
      const workspace = await admin('POST', '/workspaces', { name: provision.name ?? 'client tests' });
      await admin('POST', `/workspaces/${workspace.id}/wallet/top-ups`, { amount: provision.balance ?? 1_000_000 });
      for (const { n, dailyQuota } of provision.oas) {
        const { app_id, app_secret, oa_secret_key, refresh_token } = secretsOf(n);
        await admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId(n)}?verify=false`, {
          name: `Test OA ${n}`,
          daily_quota: dailyQuota,
          app_id,
          app_secret,
          refresh_token,
          oa_secret_key,
        });
        const common = { status: 'ENABLE', oa_id: oaId(n), preview_url: `https://example.invalid/preview/${n}` };
        await admin('PUT', `/workspaces/${workspace.id}/templates/${otpTemplate(n)}?verify=false`, { ...common, name: 'One-time password', template_type: 2, price: 250, params: OTP_PARAMS });
        await admin('PUT', `/workspaces/${workspace.id}/templates/${orderTemplate(n)}?verify=false`, { ...common, name: 'Order confirmation', template_type: 1, price: 300, params: ORDER_PARAMS });
      }
      const key = await admin('POST', `/workspaces/${workspace.id}/api-keys`, {
        name: 'sdk tests',
        scopes: provision.scopes ?? ['messages:send', 'messages:read', 'templates:read'],
        ...(provision.webhookUrl === undefined ? {} : { webhook_url: provision.webhookUrl }),
        ...(provision.rateLimitPerSecond === undefined ? {} : { rate_limit_per_second: provision.rateLimitPerSecond }),
      });
      return { id: workspace.id, apiKey: key.key, keyId: key.id };
    },
    close,
  };
}

/** Kills whatever a failed suite left running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((process) => process.stop()));
}

/** Polls until `done` holds (state changes made by the gateway's workers), or fails naming `what`. */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
