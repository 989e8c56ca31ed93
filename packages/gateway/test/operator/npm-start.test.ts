/**
 * `npm start` as the README's quick start runs it, the real command in the repository root: the
 * gateway and the ZNS simulator as separate processes, so the demo's printed send ends in
 * `delivered`. Started and stopped again on one data directory, it keeps working; the README's
 * webhook walkthrough works on it; and however it is stopped (SIGTERM or SIGHUP to the npm pid of a
 * backgrounded `npm start &`, or SIGKILL of scripts/start.js), nothing it started is left running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../harness.ts';
import { REPO_ROOT, childEnvironment, freePort } from './processes.ts';

const TEST_TIMEOUT_MS = 180_000;
const OUTPUT_WAIT_MS = 90_000;
/** scripts/start.js gives the gateway and then the simulator 10 s each; a clean stop takes far less. */
const STOP_WAIT_MS = 25_000;
const STARTED = '"msg":"tms started"';

const dataDirs: string[] = [];
function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tms-npm-start-'));
  dataDirs.push(dir);
  return dir;
}

/** Every process whose command line or environment names this data directory or these ports. */
function processesOf(dataDir: string, ports: number[]): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string;
    let environ: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone meanwhile, or a zombie
    }
    const named =
      cmdline.includes(dataDir) ||
      environ.includes(`TMS_DATA_DIR=${dataDir}\0`) ||
      ports.some((port) => cmdline.includes(`--port ${port} `) || cmdline.includes(`127.0.0.1:${port}/`));
    if (named) found.push({ pid, cmdline: cmdline.trim() });
  }
  return found;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function eventually<T>(what: string, probe: () => T | Promise<T>, done: (value: T) => boolean, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${waitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Command {
  child: ChildProcess;
  output(): string;
  waitFor(text: string | RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * A command as a shell with job control runs `command &`: its own process group, which the tests
 * never signal as a group (only the pid), exactly as `kill %1`'s pid form or `kill <pid>` would.
 */
function runCommand(command: string, args: string[], env: Record<string, string>): Command {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  let closed = false;
  void exited.then(() => (closed = true));
  return {
    child,
    output: () => output,
    exited,
    waitFor: async (text) => {
      const seen = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
      await eventually(`${command} ${args.join(' ')} printing ${String(text)}`, () => seen() || closed, Boolean, OUTPUT_WAIT_MS).catch((error: Error) => {
        throw new Error(`${error.message}\n${output}`);
      });
      if (!seen()) throw new Error(`${command} ${args.join(' ')} exited before printing ${String(text)}:\n${output}`);
      return output;
    },
  };
}

interface Demo {
  npm: Command;
  dataDir: string;
  port: number;
  simulatorPort: number;
  url: string;
  apiKey: string;
}

async function npmStart(dataDir: string, port: number, simulatorPort: number, env: Record<string, string> = {}): Promise<Demo> {
  const npm = runCommand('npm', ['start'], { TMS_DATA_DIR: dataDir, PORT: String(port), TMS_SIMULATOR_PORT: String(simulatorPort), ...env });
  await npm.waitFor(STARTED);
  const apiKey = /export TMS_API_KEY=(\S+)/.exec(npm.output())?.[1];
  if (!apiKey) throw new Error(`npm start printed no API key:\n${npm.output()}`);
  return { npm, dataDir, port, simulatorPort, url: `http://127.0.0.1:${port}`, apiKey };
}

/** The README's curl send, then its message as GET /messages/{id} shows it once it is final. */
async function sendAndWaitUntilFinal(demo: Demo): Promise<Record<string, unknown>> {
  const sent = await httpRequest(demo.url, 'POST', '/api/v1/messages/send', {
    key: demo.apiKey,
    body: { template_id: '250002', phone: '0912345678', template_data: { otp: '123456' } },
  });
  expect(sent.status, sent.text).toBe(202);
  const read = async () => (await httpRequest(demo.url, 'GET', `/api/v1/messages/${sent.body.msg_id}`, { key: demo.apiKey })).body;
  return eventually('the demo message', read, (message) => ['delivered', 'failed'].includes(message.status), 30_000);
}

/** Nothing `npm start` started survives, and both ports can be listened on again. */
async function expectAllGone(demo: Demo): Promise<void> {
  await eventually('processes of the stopped npm start', () => processesOf(demo.dataDir, [demo.port, demo.simulatorPort]), (left) => left.length === 0, STOP_WAIT_MS);
  expect(await portIsFree(demo.port)).toBe(true);
  expect(await portIsFree(demo.simulatorPort)).toBe(true);
}

afterAll(() => {
  // Whatever a failed test left behind, found by its unique data directory.
  for (const dir of dataDirs) {
    for (const { pid } of processesOf(dir, [])) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('npm start, stopped and started again on one data directory', () => {
  const dataDir = newDataDir();
  let ports: [number, number];
  let first: Demo;
  let restarted: Demo;

  it(
    'runs the gateway with the simulator, and the demo send ends in delivered',
    async () => {
      ports = [await freePort(), await freePort()];
      first = await npmStart(dataDir, ...ports);
      expect(first.npm.output()).toContain(`ZNS simulator (demo seed) on http://127.0.0.1:${ports[1]}, state in ${join(dataDir, 'zns-sim-state.json')}`);
      expect(await sendAndWaitUntilFinal(first)).toMatchObject({ status: 'delivered', provider_msg_id: expect.any(String), delivered_at: expect.any(String) });
      process.kill(first.npm.child.pid!, 'SIGTERM');
      await first.npm.exited;
      await expectAllGone(first);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'after the restart the printed key sends, the message ends in delivered, and GET /quota has no error',
    async () => {
      expect(first).toBeDefined();
      restarted = await npmStart(dataDir, ...ports);
      expect(restarted.apiKey).toBe(first.apiKey);
      expect(restarted.npm.output()).not.toContain('no simulator state');
      expect(await sendAndWaitUntilFinal(restarted)).toMatchObject({ status: 'delivered', error_code: null });
      const quota = await httpRequest(restarted.url, 'GET', '/api/v1/quota', { key: restarted.apiKey });
      expect(quota.status, quota.text).toBe(200);
      expect(quota.body.quotas).toEqual([expect.objectContaining({ oa_id: '4318269720189301001', error: null, daily_quota: 5000, used: 2 })]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "follows the banner's webhook walkthrough: tms-client listen prints the signed delivery report",
    async () => {
      expect(restarted).toBeDefined();
      const banner = restarted.npm.output();
      expect(banner).toContain('private webhook targets allowed: TMS_WEBHOOK_ALLOW_PRIVATE=true');
      const listenLine = /npx tms-client listen --port 4000 --api-key "\$TMS_API_KEY"/.exec(banner);
      const adminToken = /export TMS_ADMIN_TOKEN=(\S+)/.exec(banner)?.[1];
      const patch = /curl -s -X PATCH (\S+) -H "Authorization: Bearer \$TMS_ADMIN_TOKEN" \\\n\s+-H 'Content-Type: application\/json' -d '([^']+)'/.exec(banner);
      if (!listenLine || !adminToken || !patch) throw new Error(`the banner has no webhook walkthrough:\n${banner}`);

      // The walkthrough's port 4000 may be taken on a shared machine: the same commands on a free one.
      const receiverPort = await freePort();
      const listener = runCommand('npx', ['tms-client', 'listen', '--port', String(receiverPort), '--api-key', restarted.apiKey], {});
      try {
        await listener.waitFor(`listening on http://127.0.0.1:${receiverPort}`);
        const changed = await fetch(patch[1]!, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: patch[2]!.replace('127.0.0.1:4000', `127.0.0.1:${receiverPort}`),
        });
        expect(changed.status, await changed.clone().text()).toBe(200);
        expect(await changed.json()).toMatchObject({ webhook_url: `http://127.0.0.1:${receiverPort}/` });

        const message = await sendAndWaitUntilFinal(restarted);
        expect(message.status).toBe('delivered');
        await listener.waitFor(`delivered ${String(message.msg_id)} to 84912345678 from OA 4318269720189301001`);
        expect(listener.output()).not.toContain('refused');
        // The gateway's attempt log agrees: the listener answered 200, which it does only to a good signature.
        const listDeliveries = async () => (await httpRequest(restarted.url, 'GET', '/admin/v1/webhook-deliveries', { key: adminToken })).body.deliveries;
        const deliveries = await eventually('the webhook delivery', listDeliveries, (rows) => rows.some((row: { status: string }) => row.status === 'delivered'), 10_000);
        expect(deliveries).toEqual([expect.objectContaining({ message_id: message.msg_id, status: 'delivered', last_status_code: 200 })]);
      } finally {
        // Ctrl-C in its terminal: the whole group (npx runs the command under `sh -c`, which would not pass a signal on).
        process.kill(-listener.child.pid!, 'SIGINT');
        await listener.exited;
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'stops the gateway and the simulator when the npm pid alone gets SIGTERM',
    async () => {
      expect(restarted).toBeDefined();
      process.kill(restarted.npm.child.pid!, 'SIGTERM');
      await expectAllGone(restarted);
      await restarted.npm.exited;
    },
    TEST_TIMEOUT_MS,
  );
});

describe('npm start leaves no process behind', () => {
  it(
    'when the npm pid alone gets SIGHUP (npm does not pass it on); and an explicit TMS_WEBHOOK_ALLOW_PRIVATE=false wins',
    async () => {
      const demo = await npmStart(newDataDir(), await freePort(), await freePort(), { TMS_WEBHOOK_ALLOW_PRIVATE: 'false' });
      expect(demo.npm.output()).toContain('Delivery-report webhooks to this machine (tms-client listen) need TMS_WEBHOOK_ALLOW_PRIVATE=true.');
      expect(demo.npm.output()).not.toContain('tms-client listen --port');
      const operatorToken = /operator token: (\S+)/.exec(demo.npm.output())![1]!;
      const workspaceId = /Demo workspace (ws_\S+)/.exec(demo.npm.output())![1]!;
      const keys = await httpRequest(demo.url, 'GET', `/admin/v1/workspaces/${workspaceId}/api-keys`, { key: operatorToken });
      const refused = await httpRequest(demo.url, 'PATCH', `/admin/v1/api-keys/${keys.body.api_keys[0].id}`, { key: operatorToken, body: { webhook_url: 'http://127.0.0.1:4000/' } });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('TMS_WEBHOOK_ALLOW_PRIVATE');

      process.kill(demo.npm.child.pid!, 'SIGHUP');
      await expectAllGone(demo);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'when scripts/start.js itself is killed with SIGKILL',
    async () => {
      const demo = await npmStart(newDataDir(), await freePort(), await freePort());
      const startScript = processesOf(demo.dataDir, []).filter(({ cmdline }) => /^node scripts\/start\.js$/.test(cmdline));
      expect(startScript).toHaveLength(1);
      process.kill(startScript[0]!.pid, 'SIGKILL');
      await expectAllGone(demo);
      await demo.npm.exited;
    },
    TEST_TIMEOUT_MS,
  );
});
