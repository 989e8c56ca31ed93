/**
 * The platform killed mid-dispatch (the simulator process SIGKILLed), down for a while, then
 * restarted on the same port with the same state file. Nothing acknowledged may be lost, charged
 * twice or sent twice: every message ends delivered, the platform holds each one exactly once,
 * the wallet is charged once per message and every customer gets a signed delivery report.
 *
 * The simulator runs with --durable-sends: it stores each send before answering it, as a real
 * platform does. Without it, it writes sends up to a second after answering them, so a SIGKILL
 * makes it forget sends it answered. The gateway then holds those messages `sent` with a provider
 * id the platform no longer knows: no delivery event comes, the status lookup answers "does not
 * exist", and they stay `sent` (README: a message the platform accepted but never delivers stays
 * `sent`). That is a platform losing accepted messages, not a fault a gateway can repair, so the
 * test gives the platform the durability a real one has and checks what TMS promises with it.
 *
 * What the kill leaves, and what each case proves:
 * - sends the platform took (stored) but died before answering: staged with an after-processing
 *   timeout just before the kill, their delivery still far off. The gateway cannot know they were
 *   taken, so it waits for evidence; the restarted platform delivers them and their events mark
 *   them delivered. Sending them again would make the platform hold them twice.
 * - sends tried while the platform is down: refused connections, retried with backoff, sent once
 *   it is back. The restart waits until the gateway has had a send refused.
 * A delivery whose event died with the process is either delivered again by the restarted platform
 * (the state file had it undelivered) or found by the delivery check, which asks the restarted
 * platform by provider id; the check runs within seconds here so that case cannot stall the test.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_SEED_PATH, type MessageView, type ReceivedEntry, type Seed } from '@tms/zns-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { auditBooks, readBooks } from '../durability/support.ts';
import { freePort, STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { childEnvironment, REPO_ROOT } from '../operator/processes.ts';
import { waitFor as waitUntil } from '../wait-for.ts';
import { createHookKey, startReceiver, TEST_WEBHOOK_ENV, verifyHook, type Receiver } from '../webhooks/support.ts';
import { simulatorControl } from '../simulator-control.ts';

const SIMULATOR_BIN = fileURLToPath(new URL('../../../zns-sim/bin/tms-zns-sim.js', import.meta.url));
const MESSAGES = 300;
const OTP_TEMPLATE = '250002';
const PRICE = DEMO_TEMPLATES.find((template) => template.template_id === OTP_TEMPLATE)!.price;
const TOP_UP = 10_000_000;
const EVENT_DELAY_MS = 20;
/** The gateway's sends in flight to the one sender account. */
const SENDS_IN_FLIGHT = 2;
/**
 * Longer than the platform is down plus its restart, so a send it stored before dying is delivered
 * (and its event arrives) before the gateway would send it again.
 */
const GRACE_MS = 12_000;

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

interface PlatformProcess {
  control(method: string, path: string, body?: unknown): Promise<any>;
  kill(): Promise<void>;
}

/** `tms-zns-sim` as a child process on `port`, keeping its state in `stateFile`. */
async function startPlatform(options: { port: number; seedFile: string; stateFile: string; eventsUrl: string }): Promise<PlatformProcess> {
  const args = [
    SIMULATOR_BIN,
    ...['--port', String(options.port), '--seed', options.seedFile, '--state-file', options.stateFile],
    ...['--events-url', options.eventsUrl, '--events-delay-ms', String(EVENT_DELAY_MS)],
    '--durable-sends',
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: childEnvironment({}), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(
    () => output,
    (text) => text.includes('listening on') || child.exitCode !== null,
    'the simulator to listen',
  );
  if (child.exitCode !== null) throw new Error(`the simulator exited: ${output}`);
  const url = `http://127.0.0.1:${options.port}`;
  return {
    control: simulatorControl(url),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

describe.each(STORE_KINDS)('the platform killed and restarted mid-dispatch (%s)', (kind) => {
  let platform: PlatformProcess | undefined;
  let gateway: TestGateway | undefined;
  let receiver: Receiver | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await gateway?.close();
    await platform?.kill();
    await receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    gateway = undefined;
    platform = undefined;
    receiver = undefined;
    dir = undefined;
  });

  it('delivers every message once, charges each once and reports each, with what the restarted platform remembers', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tms-platform-restart-'));
    // The demo platform where every number is a Zalo user who receives the message.
    const seed = JSON.parse(readFileSync(DEMO_SEED_PATH, 'utf8')) as Seed;
    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify({ ...seed, recipient_rules: [] }));
    const stateFile = join(dir, 'platform-state.json');
    const port = await freePort();
    const platformUrl = `http://127.0.0.1:${port}`;

    gateway = await startTestGateway(kind, {
      worker: true,
      env: {
        ...TEST_WEBHOOK_ENV,
        ZNS_OAUTH_URL: platformUrl,
        ZNS_API_URL: platformUrl,
        ZNS_TIMEOUT_MS: '1000',
        TMS_DISPATCH_LEASE_MS: '4000',
        TMS_DISPATCH_UNCONFIRMED_GRACE_MS: String(GRACE_MS),
        // Five attempts span about 15 s of refusals: far longer than the platform is down (a
        // restart), so waiting for it never exhausts a message's attempts.
        TMS_DISPATCH_BACKOFF_MS: '1000',
        // Few sends in flight: the pause that follows their unknown outcomes stays short.
        TMS_DISPATCH_ACCOUNT_CONCURRENCY: String(SENDS_IN_FLIGHT),
        // An event lost with the process is found by asking the platform soon after.
        TMS_DELIVERY_CHECK_AFTER_MS: '2000',
        TMS_TEMPLATE_SYNC_MS: '0',
        TMS_PLATFORM_QUOTA_CACHE_MS: '0',
      },
    });
    const target = gateway;
    const eventsUrl = `${target.url}/platform/zns/events`;
    platform = await startPlatform({ port, seedFile, stateFile, eventsUrl });
    // Spread the sends out, so the kill lands with some answered, some in flight and some queued.
    await platform.control('PUT', '/faults', { latency_ms: 15 });

    receiver = await startReceiver();
    const reports = receiver;
    const workspaceId = (await target.admin('POST', '/workspaces', { name: 'platform restart' })).body.id as string;
    await target.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: TOP_UP });
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await target.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await target.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    const key = await createHookKey(target, workspaceId, reports.url());

    const recipients = Array.from({ length: MESSAGES }, (_unused, index) => ({ phone: `0914${String(index).padStart(6, '0')}`, template_data: { otp: '123456' } }));
    const accepted = await target.request('POST', '/api/v1/messages/batch', { key: key.key, body: { template_id: OTP_TEMPLATE, recipients } });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body.accepted).toBe(MESSAGES);
    const ids = (accepted.body.results as { msg_id: string }[]).map((result) => result.msg_id);

    const db = target.runtime.store.db;
    const statusCounts = async () => {
      const rows = await db.selectFrom('message_states').select('status').where('id', 'in', ids).execute();
      const counts: Record<string, number> = {};
      for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + 1;
      return counts;
    };

    const metric = async (line: string): Promise<number> => {
      const metrics = await target.request('GET', '/metrics', { key: target.config.adminToken! });
      return Number(metrics.text.split('\n').find((entry) => entry.startsWith(`${line} `))?.split(' ').pop() ?? 0);
    };

    // Dispatch under way, then the platform takes sends without answering them (it stores each,
    // schedules its delivery far ahead, holds its answer) and is killed before it does either.
    const first = platform;
    await waitFor(() => first.control('GET', '/stats'), (stats) => stats.sends.accepted >= MESSAGES / 3, 'the first sends');
    await first.control('PUT', '/events', { delay_ms: 600_000 });
    await first.control('PUT', '/faults', { timeout_rate: 1, timeout_ms: 60_000, after_processing: true });
    await waitFor(() => first.control('GET', '/stats'), (stats) => stats.faults.timeouts >= SENDS_IN_FLIGHT, 'sends taken but not answered');
    const received = (await first.control('GET', '/received?path=/message/template')).entries as ReceivedEntry[];
    const takenBy = (entry: ReceivedEntry) => (entry.response as { error?: number } | null)?.error === 0 && entry.tracking_id !== null;
    const answeredBeforeKill = received.filter((entry) => takenBy(entry) && entry.fault === null).map((entry) => entry.tracking_id!);
    const takenNotAnswered = received.filter((entry) => takenBy(entry) && entry.fault === 'timeout').map((entry) => entry.tracking_id!);
    expect(takenNotAnswered.length).toBeGreaterThanOrEqual(SENDS_IN_FLIGHT);
    await first.kill();
    platform = undefined;

    // The kill landed mid-dispatch: messages remain that the platform has not delivered.
    const afterKill = await statusCounts();
    expect((afterKill.queued ?? 0) + (afterKill.sending ?? 0) + (afterKill.sent ?? 0), JSON.stringify(afterKill)).toBeGreaterThan(0);
    expect(afterKill.delivered ?? 0, JSON.stringify(afterKill)).toBeLessThan(MESSAGES);

    // Down until the gateway has had a send refused, then back on the same port with its state.
    await waitFor(() => metric('tms_dispatch_outcomes_total{outcome="retry"}'), (retried) => retried > 0, 'a send refused while the platform is down');
    platform = await startPlatform({ port, seedFile, stateFile, eventsUrl });
    const restarted = platform;

    await waitFor(statusCounts, (counts) => counts.delivered === MESSAGES, 'every message delivered');

    // The platform holds each message exactly once: what it stored before the kill and what it
    // accepted since. Every send it answered before the kill is among them.
    const known = (await restarted.control('GET', `/messages?oa_id=${oaId}`)).messages as MessageView[];
    const timesKnown = new Map<string, number>();
    for (const message of known) timesKnown.set(message.tracking_id, (timesKnown.get(message.tracking_id) ?? 0) + 1);
    expect(ids.filter((id) => timesKnown.get(id) !== 1)).toEqual([]);
    expect(known).toHaveLength(MESSAGES);
    expect(answeredBeforeKill.filter((id) => !timesKnown.has(id))).toEqual([]);
    expect(takenNotAnswered.filter((id) => timesKnown.get(id) !== 1)).toEqual([]);
    // The gateway saw those as what they were: sends whose outcome was unknown.
    expect(await metric('tms_dispatch_outcomes_total{outcome="unconfirmed"}')).toBeGreaterThanOrEqual(SENDS_IN_FLIGHT);
    // Each message's provider id is the platform's id of that one send.
    const providerIds = new Map(
      (await db.selectFrom('message_states').select(['id', 'provider_msg_id']).where('id', 'in', ids).execute()).map((row) => [row.id, row.provider_msg_id]),
    );
    const platformIds = new Map(known.map((message) => [message.tracking_id, message.msg_id]));
    expect(ids.filter((id) => providerIds.get(id) !== platformIds.get(id))).toEqual([]);

    // Charged once per message, nothing refunded.
    expect((await target.admin('GET', `/workspaces/${workspaceId}/wallet`)).body.balance).toBe(TOP_UP - MESSAGES * PRICE);
    const books = await readBooks(db, workspaceId);
    expect(auditBooks(books, { topUp: TOP_UP, price: PRICE })).toEqual([]);
    expect(books.ledger.filter((entry) => entry.kind === 'refund')).toEqual([]);

    // Every customer got a delivery report, signed with their key, naming the platform's send.
    const reported = () => new Set(reports.hooks.map((hook) => String(verifyHook(hook, key.key).message_id)));
    await waitFor(() => reported().size, (count) => count === MESSAGES, 'a delivery report for every message');
    for (const hook of reports.hooks) {
      const report = verifyHook(hook, key.key);
      expect(report).toMatchObject({ status: 'SUCCESS', tracking_id: providerIds.get(String(report.message_id)) });
    }
    expect([...reported()].sort()).toEqual([...ids].sort());
  }, 120_000);
});
