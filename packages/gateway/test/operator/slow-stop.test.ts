/**
 * A SIGTERM that has to wait: `tms start` stops while a send is held up at a slow platform. It
 * lets the send finish, says meanwhile what the stop is still waiting for (the workers' thread,
 * and in it the dispatch loop), then records the send and exits 0. An operator watching a stop
 * that takes long sees why, and a stop that hangs past its deadline says where. SQLite only: the
 * stop's order is the same code on both stores.
 */
import type { RunningSimulator } from '@tms/zns-sim';
import { afterEach, expect, it } from 'vitest';
import { createTestDatabase, freePort, gatewayEnvironment, httpRequest, type TestDatabase } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { createHookKey, expectOk, OTP_TEMPLATE, seedDemoWorkspace, startQuietSimulator } from '../webhooks/support.ts';
import { killAllTms, startTms } from './processes.ts';

/** Well over the ten seconds after which a stop in progress logs what it waits for, even on a busy machine. */
const PLATFORM_LATENCY_MS = 20_000;

let database: TestDatabase | undefined;
let simulator: RunningSimulator | undefined;

afterEach(async () => {
  await killAllTms();
  await simulator?.close();
  simulator = undefined;
  await database?.drop();
  database = undefined;
});

interface LogLine {
  msg: string;
  thread?: string;
  waiting_for?: string[];
}

const logLines = (stdout: string): LogLine[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

it('logs what a slow stop waits for, lets the send in flight finish and exits 0', { timeout: 120_000 }, async () => {
  database = await createTestDatabase('sqlite');
  simulator = await startQuietSimulator();
  const port = await freePort();
  const env = gatewayEnvironment(database, {
    PORT: String(port),
    ZNS_OAUTH_URL: simulator.url,
    ZNS_API_URL: simulator.url,
    ZNS_TIMEOUT_MS: '30000',
    TMS_DISPATCH_POLL_MS: '20',
    TMS_LOG_LEVEL: 'info',
  });
  const tms = startTms(['start'], env);
  await tms.waitForOutput('"msg":"tms started"');
  const url = `http://127.0.0.1:${port}`;
  const gateway = { admin: (method: string, path: string, body?: unknown) => httpRequest(url, method, `/admin/v1${path}`, { key: env.TMS_ADMIN_TOKEN, body }) };
  const workspaceId = await seedDemoWorkspace(gateway);
  const { key } = await createHookKey(gateway, workspaceId, null);

  simulator.control.setFaults({ latency_ms: PLATFORM_LATENCY_MS, scope: 'send' });
  const sent = expectOk(await httpRequest(url, 'POST', '/api/v1/messages/send', { key, body: { template_id: OTP_TEMPLATE, phone: '0912345678', template_data: { otp: '123456' } } }), 'send');
  const messageId = sent.body.msg_id as string;
  const statusOf = async (): Promise<string> => (await httpRequest(url, 'GET', `/api/v1/messages/${messageId}`, { key })).body.status as string;
  await waitFor(statusOf, (status) => status === 'sending', 'the send to be in flight');

  tms.child.kill('SIGTERM');
  expect(await tms.exited, tms.stdout()).toEqual({ code: 0, signal: null });

  const slowStops = logLines(tms.stdout()).filter((line) => line.msg === 'still stopping');
  // The process waits for its workers' thread; the thread, for its dispatch loop's send.
  expect(slowStops.find((line) => line.thread === undefined)?.waiting_for).toEqual(["workers' thread"]);
  expect(slowStops.find((line) => line.thread === 'workers')?.waiting_for).toEqual(['dispatch']);
  expect(simulator.control.received()).toHaveLength(1);

  // The send finished during the stop and was recorded: the next start has nothing to send again.
  const restarted = startTms(['start'], env);
  await restarted.waitForOutput('"msg":"tms started"');
  expect(await statusOf()).toMatch(/^(sent|delivered)$/);
  expect(simulator.control.received()).toHaveLength(1);
});
