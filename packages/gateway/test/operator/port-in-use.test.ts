/**
 * `tms start` on a port another process holds: it exits 78 naming PORT and sends nothing, though
 * its workers' thread loads while the API is still being built. A message an earlier `tms api`
 * accepted stays queued and unclaimed, and the platform receives nothing; the same store on a free
 * port then sends it, so the message was ready to go. SQLite only: the thread's start-up is the
 * same code on both stores.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { RunningSimulator } from '@tms/zns-sim';
import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { createTestDatabase, freePort, gatewayEnvironment, httpRequest, type TestDatabase } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { createHookKey, expectOk, OTP_TEMPLATE, seedDemoWorkspace, startQuietSimulator } from '../webhooks/support.ts';
import { killAllTms, runTms, startTms } from './processes.ts';

const STARTED = '"msg":"tms started"';
/** EX_CONFIG: how `tms` exits on any configuration problem. */
const EX_CONFIG = 78;

let database: TestDatabase | undefined;
let simulator: RunningSimulator | undefined;
let store: Store | undefined;
let portHolder: Server | undefined;

afterEach(async () => {
  await killAllTms();
  await new Promise((resolve) => (portHolder ? portHolder.close(resolve) : resolve(undefined)));
  portHolder = undefined;
  await store?.close();
  store = undefined;
  await simulator?.close();
  simulator = undefined;
  await database?.drop();
  database = undefined;
});

/** A loopback port held by a listener of this process until the test ends. */
function holdAnyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

it('tms start exits 78 naming PORT when the port is taken, and claims and sends nothing', { timeout: 120_000 }, async () => {
  database = await createTestDatabase('sqlite');
  simulator = await startQuietSimulator();
  const env = gatewayEnvironment(database, { ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url, TMS_DISPATCH_POLL_MS: '20', TMS_LOG_LEVEL: 'info' });

  // A message accepted by an API-only process: queued, waiting for a worker.
  const apiPort = await freePort();
  const api = startTms(['api'], { ...env, PORT: String(apiPort) });
  await api.waitForOutput(STARTED);
  const url = `http://127.0.0.1:${apiPort}`;
  const gateway = { admin: (method: string, path: string, body?: unknown) => httpRequest(url, method, `/admin/v1${path}`, { key: env.TMS_ADMIN_TOKEN, body }) };
  const workspaceId = await seedDemoWorkspace(gateway);
  const { key } = await createHookKey(gateway, workspaceId, null);
  const sent = expectOk(await httpRequest(url, 'POST', '/api/v1/messages/send', { key, body: { template_id: OTP_TEMPLATE, phone: '0912345678', template_data: { otp: '123456' } } }), 'send');
  const messageId = sent.body.msg_id as string;
  expect(await api.stop()).toEqual({ code: 0, signal: null });

  const held = await holdAnyPort();
  portHolder = held.server;
  const takenPort = held.port;
  const refused = await runTms(['start'], { ...env, PORT: String(takenPort) });
  expect(refused.code, refused.stderr).toBe(EX_CONFIG);
  expect(refused.stderr).toContain(`PORT ${takenPort} is already in use`);
  expect(refused.stdout).not.toContain(STARTED);

  store = openStore(parseConfig(env).database);
  const untouched = await store.db.selectFrom('message_states').select(['status', 'attempts']).where('id', '=', messageId).executeTakeFirstOrThrow();
  expect(untouched).toEqual({ status: 'queued', attempts: 0 });
  expect(simulator.control.messages()).toEqual([]);

  // The same store on a free port sends it: the refused start had work it could have claimed.
  const started = startTms(['start'], { ...env, PORT: String(await freePort()) });
  await started.waitForOutput(STARTED);
  await waitFor(() => simulator!.control.messages().length, (count) => count === 1, 'the queued message to reach the platform');
  expect(await started.stop()).toEqual({ code: 0, signal: null });
});
