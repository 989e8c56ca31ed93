/**
 * /readyz tells whether the process's worker loops make progress, not only whether the store
 * answers a SELECT: a dispatch loop that stopped completing rounds makes it 503 (error envelope,
 * service_unavailable), and the age of each loop's last round is a metric. Real gateway with its
 * workers. The dispatch stall is a lock on the messages table held by another session, which
 * blocks the claims while the store still answers: PostgreSQL only (a blocked SQLite write blocks
 * the whole process, readiness included). The periodic tasks' stall is a round hung on a platform
 * that never answers, with the gateway's clock moved past the task's bound: both stores.
 */
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT } from '../../src/services/demo.ts';
import { STORE_KINDS, createTestDatabase, freePort, gatewayEnvironment, httpRequest, startTestGateway, type TestDatabase, type TestGateway } from '../harness.ts';
import { killAllTms, startTms, type RunningTms } from '../operator/processes.ts';
import { waitFor as waitUntil } from '../wait-for.ts';
import { WORKER_LOOPS_WITHOUT_TEMPLATE_SYNC } from '../worker-loops.ts';

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

const WORKER_ENV = {
  // No platform is needed: nothing is sent.
  ZNS_API_URL: 'http://127.0.0.1:9',
  ZNS_OAUTH_URL: 'http://127.0.0.1:9',
  ZNS_TIMEOUT_MS: '100',
  TMS_DISPATCH_POLL_MS: '20',
  TMS_TEMPLATE_SYNC_MS: '0',
  TMS_PLATFORM_QUOTA_CACHE_MS: '0',
};

function loopAges(metricsText: string): Map<string, number> {
  const ages = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    const match = /^tms_worker_loop_last_round_age_seconds\{loop="([a-z_]+)"\} (\S+)$/.exec(line);
    if (match) ages.set(match[1]!, Number(match[2]));
  }
  return ages;
}

describe.each(STORE_KINDS)('readiness and worker loops (%s)', (kind) => {
  let gateway: TestGateway | undefined;

  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('reports the age of every worker loop of the process and is ready while they run', async () => {
    gateway = await startTestGateway(kind, { worker: true, env: WORKER_ENV });
    const target = gateway;
    expect((await target.request('GET', '/readyz')).status).toBe(200);
    const metrics = await target.request('GET', '/metrics', { key: target.config.adminToken! });
    expect([...loopAges(metrics.text).keys()].sort()).toEqual(WORKER_LOOPS_WITHOUT_TEMPLATE_SYNC);
  });

  it.runIf(kind === 'postgres')('answers 503 while the dispatch loop cannot complete a round, and ready again once it can', async () => {
    gateway = await startTestGateway(kind, { worker: true, env: WORKER_ENV });
    const target = gateway;
    expect((await target.request('GET', '/readyz')).status).toBe(200);

    // Another session holds a lock that blocks every claim; reads (and SELECT 1) still work.
    const blocker = new pg.Client({ connectionString: target.database.env.DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE messages, message_states IN EXCLUSIVE MODE');
      const stalled = await waitFor(() => target.request('GET', '/readyz'), (response) => response.status !== 200, 'readiness to fail');
      expect(stalled.status).toBe(503);
      expect(stalled.body.error).toMatchObject({ type: 'service_unavailable', message: expect.stringContaining('dispatch_claims') });
      const metrics = await target.request('GET', '/metrics', { key: target.config.adminToken! });
      expect(loopAges(metrics.text).get('dispatch_claims')).toBeGreaterThan(0);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    await waitFor(() => target.request('GET', '/readyz'), (response) => response.status === 200, 'readiness to come back');
  });
});

/**
 * A periodic task (template sync here) is stalled only while one of its rounds hangs far beyond
 * its bound, never while it waits for its next round, however long its interval. The gateway's
 * clock is moved an hour on while a sync round waits for a platform that does not answer: the
 * hourly tasks, between rounds, stay fine.
 */
describe.each(STORE_KINDS)('readiness and the periodic tasks (%s)', (kind) => {
  const HOUR_MS = 3_600_000;
  let sim: RunningSimulator | undefined;
  let gateway: TestGateway | undefined;

  afterEach(async () => {
    // The simulator first: closing it ends the hung request, so the sync round ends and the worker can stop.
    await sim?.close();
    await gateway?.close();
    sim = undefined;
    gateway = undefined;
  });

  it('answers 503 naming template_sync while its round hangs past its bound, and ready again once the round ends', async () => {
    sim = await startSimulator({ eventsUrl: null });
    let clockOffsetMs = 0;
    gateway = await startTestGateway(kind, {
      worker: true,
      clock: () => Date.now() + clockOffsetMs,
      // The longest deadline, so the hung call outlives the test's checks.
      env: { ...WORKER_ENV, ZNS_API_URL: sim.url, ZNS_OAUTH_URL: sim.url, ZNS_TIMEOUT_MS: '120000', TMS_TEMPLATE_SYNC_MS: '100' },
    });
    const target = gateway;
    const platform = sim;
    const workspace = (await target.admin('POST', '/workspaces', { name: 'periodic stall' })).body;
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await target.admin('PUT', `/workspaces/${workspace.id}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    expect((await target.request('GET', '/readyz')).status).toBe(200);

    // Every request is held without an answer; the next sync round waits on one.
    platform.control.setFaults({ timeout_rate: 1, timeout_ms: 600_000, scope: 'all' });
    await waitFor(() => platform.control.stats().faults.timeouts, (held) => held > 0, 'a sync round to wait on the platform');
    clockOffsetMs = HOUR_MS;

    // Loops that complete rounds catch up with the moved clock at their next round; the hung sync cannot.
    const stalled = await waitFor(
      () => target.request('GET', '/readyz'),
      (response) => /^worker loop stalled: template_sync \(\d+ s without progress, limit \d+ s\)$/.test(response.body?.error?.message ?? ''),
      'readiness to name the hung template sync alone',
    );
    expect(stalled.status).toBe(503);
    expect(stalled.body.error.type).toBe('service_unavailable');
    const ages = loopAges((await target.request('GET', '/metrics', { key: target.config.adminToken! })).text);
    expect(ages.get('template_sync')).toBeGreaterThanOrEqual(HOUR_MS / 1000);
    // Hourly tasks between their rounds: an hour since their last round is no stall.
    for (const loop of ['erase_personal_data', 'purge_console_sessions', 'purge_webhook_deliveries']) expect(ages.get(loop), loop).toBe(0);

    // The platform goes away: the held request fails, the round ends, and the process is ready again.
    await platform.close();
    sim = undefined;
    await waitFor(() => target.request('GET', '/readyz'), (response) => response.status === 200, 'readiness to come back');
  });
});

/**
 * `tms start` runs its workers in a second thread (TMS_WORKER_THREAD, default on): the process's
 * /metrics and /readyz, served by the API's thread, must still see that thread's loops and counts.
 */
const WORKER_THREAD_HEAP_MB = 80;
const MB = 1024 * 1024;

/** A per-thread gauge's values from a /metrics text, by its `thread` label. */
function gaugeByThread(lines: string[], name: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of lines) {
    const match = new RegExp(`^${name}\\{thread="(\\w+)"\\} (\\S+)$`).exec(line);
    if (match) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

describe.each(STORE_KINDS)('readiness and metrics of `tms start` with its workers in a thread (%s)', (kind) => {
  let database: TestDatabase | undefined;

  afterEach(async () => {
    await killAllTms();
    await database?.drop();
    database = undefined;
  });

  async function startProcess(workerThread: boolean): Promise<{ tms: RunningTms; url: string; env: Record<string, string> }> {
    database = await createTestDatabase(kind);
    const port = await freePort();
    const env = gatewayEnvironment(database, { ...WORKER_ENV, PORT: String(port), TMS_WORKER_THREAD: String(workerThread), TMS_WORKER_THREAD_HEAP_MB: String(WORKER_THREAD_HEAP_MB) });
    const tms = startTms(['start'], env);
    await tms.waitForOutput('TMS gateway listening');
    return { tms, url: `http://127.0.0.1:${port}`, env };
  }

  it.each([true, false])('with TMS_WORKER_THREAD=%s: every worker loop and the process metrics once each, ready, and a clean SIGTERM', async (workerThread) => {
    const { tms, url, env } = await startProcess(workerThread);
    expect((await httpRequest(url, 'GET', '/readyz')).status).toBe(200);
    const metrics = await httpRequest(url, 'GET', '/metrics', { key: env.TMS_ADMIN_TOKEN });
    expect(metrics.status).toBe(200);
    expect([...loopAges(metrics.text).keys()].sort()).toEqual(WORKER_LOOPS_WITHOUT_TEMPLATE_SYNC);
    const lines = metrics.text.split('\n');
    expect(lines.filter((line) => line.startsWith('tms_process_start_time_seconds '))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('tms_queue_messages{state="queued"} '))).toHaveLength(1);
    // Request counts of both threads are summed into one series, not listed once per thread.
    expect(lines.filter((line) => line.startsWith('tms_http_requests_total{method="GET",route="/readyz",status_class="2xx"} '))).toEqual([
      'tms_http_requests_total{method="GET",route="/readyz",status_class="2xx"} 1',
    ]);
    // Each thread's heap, the workers' thread under its configured limit (V8 adds its young generation to it).
    const heapLimits = gaugeByThread(lines, 'tms_thread_heap_limit_bytes');
    expect([...heapLimits.keys()].sort()).toEqual(workerThread ? ['main', 'workers'] : ['main']);
    expect(heapLimits.get('main')).toBeGreaterThan(4 * WORKER_THREAD_HEAP_MB * MB);
    if (workerThread) {
      expect(heapLimits.get('workers')).toBeGreaterThanOrEqual(WORKER_THREAD_HEAP_MB * MB);
      expect(heapLimits.get('workers')).toBeLessThan(2 * WORKER_THREAD_HEAP_MB * MB);
    }
    for (const used of gaugeByThread(lines, 'tms_thread_heap_used_bytes').values()) expect(used).toBeGreaterThan(MB);
    expect(await tms.stop()).toEqual({ code: 0, signal: null });
  });

  it("refuses to run with a heap limit the workers' thread cannot start in, naming the variable", async () => {
    database = await createTestDatabase(kind);
    const env = gatewayEnvironment(database, { ...WORKER_ENV, PORT: String(await freePort()), TMS_WORKER_THREAD: 'true', TMS_WORKER_THREAD_HEAP_MB: '4' });
    const tms = startTms(['start'], env);
    expect(await tms.exited).toEqual({ code: 78, signal: null });
    expect(tms.stderr() + tms.stdout()).toContain("TMS_WORKER_THREAD_HEAP_MB 4 MB is too little for the workers' thread to start");
  });

  it.runIf(kind === 'postgres')("answers 503 while the workers' thread cannot claim, and ready again once it can", async () => {
    const { url, env } = await startProcess(true);
    await waitFor(() => httpRequest(url, 'GET', '/readyz'), (response) => response.status === 200, 'readiness');
    const blocker = new pg.Client({ connectionString: env.DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE messages, message_states IN EXCLUSIVE MODE');
      const stalled = await waitFor(() => httpRequest(url, 'GET', '/readyz'), (response) => response.status !== 200, 'readiness to fail');
      expect(stalled.status).toBe(503);
      expect(stalled.body.error).toMatchObject({ type: 'service_unavailable', message: expect.stringContaining('dispatch_claims') });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    await waitFor(() => httpRequest(url, 'GET', '/readyz'), (response) => response.status === 200, 'readiness to come back');
  });
});
