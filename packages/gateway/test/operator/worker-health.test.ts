/**
 * `tms worker` answers probes and Prometheus on its own PORT, as a real child process: /healthz,
 * /readyz (the store answers and its loops make progress; 503 with the reason otherwise) and
 * /metrics behind the operator token, and nothing else of the gateway. The stall and the outage
 * are real: a lock that blocks the claims, and a database that refuses connections (PostgreSQL;
 * a blocked SQLite write blocks the whole process, readiness included).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { STORE_KINDS, createTestDatabase, freePort, gatewayEnvironment, httpRequest, type TestDatabase, type TestResponse } from '../harness.ts';
import { killAllTms, runTms, startTms, type RunningTms } from './processes.ts';
import { waitFor } from '../wait-for.ts';
import { WORKER_LOOPS_WITHOUT_TEMPLATE_SYNC } from '../worker-loops.ts';

const WORKER_ENV = {
  // No platform is needed: nothing is sent.
  ZNS_API_URL: 'http://127.0.0.1:9',
  ZNS_OAUTH_URL: 'http://127.0.0.1:9',
  ZNS_TIMEOUT_MS: '100',
  TMS_DISPATCH_POLL_MS: '20',
  TMS_TEMPLATE_SYNC_MS: '0',
  TMS_PLATFORM_QUOTA_CACHE_MS: '0',
};

const CONFIG_ERROR_EXIT = 78;

describe.each(STORE_KINDS)('tms worker health endpoints (%s)', (kind) => {
  let database: TestDatabase | undefined;

  afterEach(async () => {
    await killAllTms();
    await database?.drop();
    database = undefined;
  });

  async function startWorker(): Promise<{ worker: RunningTms; url: string; env: Record<string, string> }> {
    database = await createTestDatabase(kind);
    const port = await freePort();
    const env = gatewayEnvironment(database, { ...WORKER_ENV, PORT: String(port) });
    const worker = startTms(['worker'], env);
    const url = `http://127.0.0.1:${port}`;
    const answered = (): Promise<TestResponse | null> => httpRequest(url, 'GET', '/readyz').catch(() => null);
    await waitFor(answered, (response) => response?.status === 200 || worker.child.exitCode !== null, 'the worker to be ready', 60_000);
    if (worker.child.exitCode !== null) throw new Error(`tms worker exited: ${worker.stderr()}`);
    return { worker, url, env };
  }

  const readiness = (url: string) => httpRequest(url, 'GET', '/readyz');

  it('answers /healthz, /readyz and /metrics (behind the token) and nothing else; SIGTERM ends it with 0', async () => {
    const { worker, url, env } = await startWorker();
    expect(await httpRequest(url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await readiness(url)).toMatchObject({ status: 200, body: { status: 'ready', store: kind } });
    expect((await httpRequest(url, 'GET', '/metrics')).status).toBe(401);

    const metrics = await httpRequest(url, 'GET', '/metrics', { key: env.TMS_ADMIN_TOKEN });
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = metrics.text.split('\n');
    const loops = lines.map((line) => /^tms_worker_loop_last_round_age_seconds\{loop="([a-z_]+)"\} /.exec(line)?.[1]).filter((loop) => loop !== undefined);
    expect(loops.sort()).toEqual(WORKER_LOOPS_WITHOUT_TEMPLATE_SYNC);
    expect(lines.filter((line) => line.startsWith('tms_process_start_time_seconds '))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('tms_queue_oldest_due_age_seconds '))).toHaveLength(1);
    expect(lines.some((line) => line.startsWith('tms_http_requests_total{method="GET",route="/readyz",status_class="2xx"} '))).toBe(true);

    // Only the probes and the metrics: no API, no operator API, no console, no reference pages.
    const token = { key: env.TMS_ADMIN_TOKEN };
    for (const [method, path] of [
      ['POST', '/api/v1/messages/send'],
      ['GET', '/admin/v1/workspaces'],
      ['POST', '/platform/zns/events'],
      ['GET', '/console'],
      ['GET', '/console/api/session'],
      ['GET', '/openapi.json'],
      ['GET', '/docs'],
    ] as const) {
      const response = await httpRequest(url, method, path, { ...token, body: method === 'POST' ? {} : undefined });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.type).toBe('route_not_found');
    }

    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it.runIf(kind === 'sqlite')('stops at once, naming PORT, when another process holds its port', async () => {
    const { env } = await startWorker();
    const second = await runTms(['worker'], env);
    expect(second.code).toBe(CONFIG_ERROR_EXIT);
    expect(second.stderr).toContain(`PORT ${env.PORT} is already in use`);
  });

  it.runIf(kind === 'postgres')('answers 503 naming the loop while the claims cannot complete a round, and 200 again once they can', async () => {
    const { url, env } = await startWorker();
    const blocker = new pg.Client({ connectionString: env.DATABASE_URL });
    await blocker.connect();
    try {
      // Blocks every claim; reads (and the readiness SELECT 1) still work.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE messages, message_states IN EXCLUSIVE MODE');
      const stalled = await waitFor(() => readiness(url), (response) => response.status !== 200, 'readiness to fail', 20_000);
      expect(stalled.status).toBe(503);
      expect(stalled.body.error).toMatchObject({ type: 'service_unavailable', message: expect.stringContaining('worker loop stalled: dispatch_claims') });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    await waitFor(() => readiness(url), (response) => response.status === 200, 'readiness to come back', 20_000);
  });

  it.runIf(kind === 'postgres')('answers 503 while its database refuses connections, and 200 again once it accepts them', async () => {
    const { url, env } = await startWorker();
    const name = new URL(env.DATABASE_URL!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.TMS_TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      const down = await waitFor(() => readiness(url), (response) => response.status !== 200, 'readiness to fail', 20_000);
      expect(down.status).toBe(503);
      expect(down.body.error).toMatchObject({ type: 'service_unavailable', message: 'store not reachable' });
      // Alive all the same: a liveness probe must not restart a worker for its database's outage.
      expect((await httpRequest(url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    await waitFor(() => readiness(url), (response) => response.status === 200, 'readiness to come back', 30_000);
  });
});
