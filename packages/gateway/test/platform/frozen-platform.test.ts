/**
 * A platform that freezes mid-dispatch (the simulator process stopped with SIGSTOP, then resumed
 * with SIGCONT) must not make the gateway send anything twice. Sends written to the frozen platform
 * time out with their outcome unknown: the platform takes them when it resumes. So they wait,
 * unconfirmed, for their delivery events instead of being retried. Real simulator process over
 * HTTP, the gateway's own worker, SQLite and PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { freePort, STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { childEnvironment, REPO_ROOT } from '../operator/processes.ts';
import { waitFor as waitUntil } from '../wait-for.ts';
import { simulatorControl } from '../simulator-control.ts';

const SIMULATOR_BIN = fileURLToPath(new URL('../../../zns-sim/bin/tms-zns-sim.js', import.meta.url));
const MESSAGES = 400;
const OTP_TEMPLATE = '250002';
const PRICE = DEMO_TEMPLATES.find((template) => template.template_id === OTP_TEMPLATE)!.price;
const TOP_UP = 10_000_000;
/** How long the platform stays frozen: several send deadlines. */
const FROZEN_MS = 4000;

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 120_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

interface SimulatorProcess {
  url: string;
  child: ChildProcess;
  control(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

async function startSimulatorProcess(): Promise<SimulatorProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [SIMULATOR_BIN, '--port', String(port), '--events-delay-ms', '20'], { cwd: REPO_ROOT, env: childEnvironment({}), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(
    async () => output,
    (text) => text.includes('listening on') || child.exitCode !== null,
    'the simulator to listen',
    60_000,
  );
  if (child.exitCode !== null) throw new Error(`the simulator exited: ${output}`);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    child,
    control: simulatorControl(url),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exited;
    },
  };
}

describe.each(STORE_KINDS)('a platform frozen mid-dispatch (%s)', (kind) => {
  let simulator: SimulatorProcess | undefined;
  let gateway: TestGateway | undefined;

  afterEach(async () => {
    await gateway?.close();
    await simulator?.stop();
    gateway = undefined;
    simulator = undefined;
  });

  it('takes every message exactly once after it resumes: all delivered, the wallet charged once each', async () => {
    simulator = await startSimulatorProcess();
    const sim = simulator;
    gateway = await startTestGateway(kind, {
      worker: true,
      env: {
        ZNS_OAUTH_URL: sim.url,
        ZNS_API_URL: sim.url,
        // Short enough that sends time out several times over while the platform is frozen.
        ZNS_TIMEOUT_MS: '1000',
        // Long enough for the platform to resume and send its delivery events.
        TMS_DISPATCH_UNCONFIRMED_GRACE_MS: '15000',
        TMS_DISPATCH_LEASE_MS: '4000',
        TMS_DISPATCH_POLL_MS: '20',
        TMS_DISPATCH_BACKOFF_MS: '200',
        TMS_DISPATCH_ACCOUNT_CONCURRENCY: '8',
        TMS_TEMPLATE_SYNC_MS: '0',
        TMS_PLATFORM_QUOTA_CACHE_MS: '0',
      },
    });
    const target = gateway;
    await sim.control('PUT', '/recipient-rules', []);
    await sim.control('PUT', '/events', { url: `${target.url}/platform/zns/events`, delay_ms: 20 });
    await sim.control('PUT', '/faults', { latency_ms: 20 });

    const workspaceId = (await target.admin('POST', '/workspaces', { name: 'frozen platform' })).body.id as string;
    await target.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: TOP_UP });
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await target.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await target.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    const apiKey = (await target.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key as string;

    const recipients = Array.from({ length: MESSAGES }, (_unused, index) => ({ phone: `0913${String(index).padStart(6, '0')}`, template_data: { otp: '123456' } }));
    const accepted = await target.request('POST', '/api/v1/messages/batch', { key: apiKey, body: { template_id: OTP_TEMPLATE, recipients } });
    expect(accepted.status, accepted.text).toBe(202);
    const ids = (accepted.body.results as { msg_id: string }[]).map((result) => result.msg_id);

    // Freeze the platform once dispatch is under way, with sends in flight and messages still queued.
    await waitFor(() => sim.control('GET', '/stats'), (stats) => stats.sends.accepted >= MESSAGES / 10, 'the first sends');
    sim.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, FROZEN_MS));
    sim.child.kill('SIGCONT');

    const db = target.runtime.store.db;
    const delivered = async () => (await db.selectFrom('message_states').select('id').where('id', 'in', ids).where('status', '=', 'delivered').execute()).length;
    await waitFor(delivered, (count) => count === MESSAGES, 'every message delivered');

    // Each message was taken by the platform exactly once.
    const received = (await sim.control('GET', '/received?path=/message/template')).entries as { tracking_id: string | null; response: { error?: number } | null }[];
    const acceptedSends = new Map<string, number>();
    for (const entry of received) {
      if (entry.response?.error === 0 && entry.tracking_id) acceptedSends.set(entry.tracking_id, (acceptedSends.get(entry.tracking_id) ?? 0) + 1);
    }
    expect(ids.filter((id) => acceptedSends.get(id) !== 1)).toEqual([]);
    expect((await sim.control('GET', '/stats')).sends.duplicate_accepts).toBe(0);
    expect((await target.admin('GET', `/workspaces/${workspaceId}/wallet`)).body.balance).toBe(TOP_UP - MESSAGES * PRICE);

    // The freeze was seen for what it was: sends whose outcome was unknown.
    const metrics = await target.request('GET', '/metrics', { key: target.config.adminToken! });
    const unknown = metrics.text.split('\n').find((line) => line.startsWith('tms_dispatch_unknown_outcomes_total{cause="timeout"}'));
    expect(Number(unknown?.split(' ').pop())).toBeGreaterThan(0);
  }, 240_000);
});
