/**
 * "A message acknowledged by a 202 is committed before the 202 is sent: SIGKILL the process right
 * after a 202 and the message is there after restart." The real `tms api` runs as a subprocess
 * under a continuous load of sends and batches and is killed with SIGKILL the moment enough 202s
 * have arrived while others are still in flight; then it is restarted on the same database.
 * Every request carries an Idempotency-Key, so after the restart the client's retries must replay
 * what was acknowledged (and whatever was committed unanswered) without a second charge.
 * Also: SIGTERM under load (graceful stop), and PostgreSQL cutting the gateway's connections.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, createTestDatabase, gatewayEnvironment, httpRequest, seedWorkspace, type SeededWorkspace, type TestDatabase } from '../harness.ts';
import { auditBooks, inParallel, readBooksFromEnvironment, remoteGateway, startGatewayProcess, type GatewayProcess } from './support.ts';

const TOP_UP = 50_000_000;
const PRICE = 300;
const IN_FLIGHT = 40;
const ROUNDS = 3;
/** Safety stop for a load loop that never sees enough 202s (the test then fails). */
const MAX_ATTEMPTS_PER_ROUND = 4_000;

interface Attempt {
  key: string;
  path: '/api/v1/messages/send' | '/api/v1/messages/batch';
  body: Record<string, unknown>;
  /** HTTP status if one arrived before the kill, else null (outcome unknown to the client). */
  status: number | null;
  /** The parsed 202 body if it was read completely. */
  response: any;
}

function randomPhone(): string {
  return `09${randomBytes(4).readUInt32BE(0).toString().padStart(10, '0').slice(-8)}`;
}

function makeAttempt(workspace: SeededWorkspace, round: number, index: number): Attempt {
  const key = `crash-${round}-${index}-${randomBytes(4).toString('hex')}`;
  if (index % 3 === 2) {
    const recipients = Array.from({ length: 2 + (index % 4) }, () => ({ phone: randomPhone(), template_data: VALID_DATA }));
    return { key, path: '/api/v1/messages/batch', body: { template_id: workspace.templateId, recipients }, status: null, response: undefined };
  }
  return { key, path: '/api/v1/messages/send', body: { template_id: workspace.templateId, phone: randomPhone(), template_data: VALID_DATA }, status: null, response: undefined };
}

/** POSTs an attempt with its Idempotency-Key; a dead connection leaves the outcome unknown (status null). */
async function sendAttempt(url: string, apiKey: string, attempt: Attempt, dispatcher?: Dispatcher): Promise<void> {
  try {
    const response = await undiciFetch(`${url}${attempt.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': attempt.key },
      body: JSON.stringify(attempt.body),
      signal: AbortSignal.timeout(120_000),
      dispatcher,
    });
    attempt.status = response.status;
    attempt.response = JSON.parse(await response.text());
  } catch {
    // The connection died with the process: the client does not know the outcome.
  }
}

/**
 * What a client does after trouble: sends every request again with its Idempotency-Key. One whose
 * 202 was seen must be replayed word for word; any other is either replayed or accepted now.
 * Adds every acknowledged msg_id to `acknowledged`.
 */
async function retryAll(url: string, workspace: SeededWorkspace, attempts: Attempt[], acknowledged: Set<string>): Promise<void> {
  const retries = await inParallel(attempts, 16, async (attempt) => {
    const retry = await httpRequest(url, 'POST', attempt.path, { key: workspace.apiKey, body: attempt.body, headers: { 'idempotency-key': attempt.key } });
    return { attempt, retry };
  });
  for (const { attempt, retry } of retries) {
    expect(retry.status, `retry of ${attempt.key}: ${retry.text}`).toBe(202);
    if (attempt.status === 202) {
      expect(retry.headers.get('idempotent-replayed'), `retry of acknowledged ${attempt.key}`).toBe('true');
      if (attempt.response !== undefined) expect(retry.body).toEqual(attempt.response);
    }
    for (const id of acknowledgedIds(attempt, retry.body)) acknowledged.add(id);
  }
}

/** The database holds exactly the acknowledged messages, each paid for exactly once. */
async function expectBooksMatch(env: Record<string, string>, workspace: SeededWorkspace, acknowledged: Set<string>): Promise<void> {
  const books = await readBooksFromEnvironment(env, workspace.workspaceId);
  expect(books.messageIds.length).toBe(acknowledged.size);
  expect(new Set(books.messageIds)).toEqual(acknowledged);
  expect(auditBooks(books, { topUp: TOP_UP, price: PRICE })).toEqual([]);
}

/** The msg_ids a complete 202 body acknowledges. */
function acknowledgedIds(attempt: Pick<Attempt, 'path'>, body: any): string[] {
  if (attempt.path === '/api/v1/messages/send') return [body.msg_id as string];
  return (body.results as { status: string; msg_id?: string }[]).filter((result) => result.status === 'queued').map((result) => result.msg_id!);
}

/**
 * Keeps IN_FLIGHT requests going until `threshold` 202s have been read, then sends `signal` to the
 * gateway from inside the handler of that 202, while the other requests are still in flight.
 */
async function loadUntilSignalled(gateway: GatewayProcess, workspace: SeededWorkspace, round: number, threshold: number, signal: NodeJS.Signals) {
  const attempts: Attempt[] = [];
  const inFlight = new Set<Promise<void>>();
  let acceptedSeen = 0;
  let killed = false;
  let inFlightAtKill = 0;
  let died = false;
  void gateway.exited.then(() => {
    died = true;
  });
  // The load's own connection pool, so that its keep-alive connections can be closed once every
  // answer is in, as a client that is done would (a graceful stop waits for open connections).
  const agent = new Agent();
  const fire = async (attempt: Attempt): Promise<void> => {
    await sendAttempt(gateway.url, workspace.apiKey, attempt, agent);
    if (attempt.status === 202 && attempt.response !== undefined) {
      acceptedSeen += 1;
      if (acceptedSeen >= threshold && !killed) {
        killed = true;
        inFlightAtKill = inFlight.size - 1;
        gateway.child.kill(signal);
      }
    }
  };
  let index = 0;
  while (!killed) {
    if (died) throw new Error(`the gateway died before the test signalled it (${JSON.stringify(await gateway.exited)}):\n${gateway.output()}`);
    if (index >= MAX_ATTEMPTS_PER_ROUND) throw new Error(`only ${acceptedSeen} of ${threshold} 202s after ${index} requests`);
    while (!killed && inFlight.size < IN_FLIGHT) {
      const attempt = makeAttempt(workspace, round, index);
      index += 1;
      attempts.push(attempt);
      const promise: Promise<void> = fire(attempt).finally(() => inFlight.delete(promise));
      inFlight.add(promise);
    }
    await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  await agent.destroy();
  const exit = await gateway.exited;
  return { attempts, inFlightAtKill, exit };
}

describe.each(STORE_KINDS)('SIGKILL right after a 202 (%s)', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let gateway: GatewayProcess | null = null;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    env = gatewayEnvironment(database);
  });

  afterAll(async () => {
    await gateway?.kill();
    await database?.drop();
  });

  it(
    'every acknowledged message survives, each retry with its Idempotency-Key replays it, and the money matches the rows',
    async () => {
      gateway = await startGatewayProcess(env);
      const workspace = await seedWorkspace(remoteGateway(gateway.url, env.TMS_ADMIN_TOKEN!), { balance: TOP_UP, price: PRICE });
      /** Every msg_id the gateway has acknowledged with a 202 so far, to any request. */
      const acknowledged = new Set<string>();

      for (let round = 1; round <= ROUNDS; round += 1) {
        const threshold = 20 + (round - 1) * 60 + randomBytes(1).readUInt8(0) % 20;
        const { attempts, inFlightAtKill, exit } = await loadUntilSignalled(gateway, workspace, round, threshold, 'SIGKILL');
        expect(exit.signal, 'the gateway was killed by our SIGKILL').toBe('SIGKILL');
        expect(inFlightAtKill, 'requests were still in flight when the 202 that triggered the kill arrived').toBeGreaterThan(0);
        const answered = attempts.filter((attempt) => attempt.status !== null);
        expect(answered.filter((attempt) => attempt.status !== 202).map((attempt) => [attempt.status, attempt.response])).toEqual([]);
        const acknowledgedNow = attempts.filter((attempt) => attempt.status === 202 && attempt.response !== undefined);
        expect(acknowledgedNow.length).toBeGreaterThanOrEqual(threshold);
        const idsSeenBeforeKill = acknowledgedNow.flatMap((attempt) => acknowledgedIds(attempt, attempt.response));
        expect(idsSeenBeforeKill.length).toBeGreaterThanOrEqual(threshold);

        gateway = await startGatewayProcess(env);
        const restarted = gateway;

        // Every message acknowledged before the kill is in the restarted gateway, queued.
        const lookups = await inParallel(idsSeenBeforeKill, 16, async (id) => {
          const record = await httpRequest(restarted.url, 'GET', `/api/v1/messages/${id}`, { key: workspace.apiKey });
          return { id, status: record.status, state: record.body?.status };
        });
        expect(lookups.filter((lookup) => lookup.status !== 200 || lookup.state !== 'queued')).toEqual([]);

        await retryAll(restarted.url, workspace, attempts, acknowledged);
        await expectBooksMatch(env, workspace, acknowledged);

        const wallet = await httpRequest(restarted.url, 'GET', `/admin/v1/workspaces/${workspace.workspaceId}/wallet`, { key: env.TMS_ADMIN_TOKEN! });
        expect(wallet.body.balance).toBe(TOP_UP - PRICE * acknowledged.size);
      }
      await gateway.kill();
    },
    600_000,
  );
});

describe.each(STORE_KINDS)('SIGTERM under load (%s)', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let gateway: GatewayProcess | null = null;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    env = gatewayEnvironment(database);
  });

  afterAll(async () => {
    await gateway?.kill();
    await database?.drop();
  });

  it(
    'a graceful stop answers what it took in, exits 0, and loses nothing it acknowledged',
    async () => {
      const first = await startGatewayProcess(env);
      gateway = first;
      const workspace = await seedWorkspace(remoteGateway(first.url, env.TMS_ADMIN_TOKEN!), { balance: TOP_UP, price: PRICE });
      const { attempts, exit } = await loadUntilSignalled(first, workspace, 1, 60, 'SIGTERM');
      expect(exit, first.output()).toEqual({ code: 0, signal: null });
      // While closing, a request is answered (202) or refused whole (503), never left half done.
      expect(attempts.filter((attempt) => attempt.status !== null && attempt.status !== 202 && attempt.status !== 503).map((attempt) => [attempt.status, attempt.response])).toEqual([]);
      const seen = attempts.filter((attempt) => attempt.status === 202 && attempt.response !== undefined).flatMap((attempt) => acknowledgedIds(attempt, attempt.response));
      expect(seen.length).toBeGreaterThanOrEqual(60);

      const restarted = await startGatewayProcess(env);
      gateway = restarted;
      const books = await readBooksFromEnvironment(env, workspace.workspaceId);
      const stored = new Set(books.messageIds);
      expect(seen.filter((id) => !stored.has(id))).toEqual([]);
      const acknowledged = new Set<string>();
      await retryAll(restarted.url, workspace, attempts, acknowledged);
      await expectBooksMatch(env, workspace, acknowledged);
      await restarted.kill();
    },
    300_000,
  );
});

/** Ends every other session on the database, as a PostgreSQL restart or failover does. Returns how many. */
async function terminateConnections(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query('SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return result.rows.filter((row: { ended: boolean }) => row.ended).length;
  } finally {
    await client.end();
  }
}

describe.each(STORE_KINDS.filter((kind) => kind === 'postgres'))('PostgreSQL drops the gateway connections (%s)', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let gateway: GatewayProcess | null = null;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    env = gatewayEnvironment(database);
  });

  afterAll(async () => {
    await gateway?.kill();
    await database?.drop();
  });

  it(
    'the gateway stays up and keeps accepting; nothing acknowledged is lost or charged twice',
    async () => {
      const running = await startGatewayProcess(env);
      gateway = running;
      const workspace = await seedWorkspace(remoteGateway(running.url, env.TMS_ADMIN_TOKEN!), { balance: TOP_UP, price: PRICE });
      const attempts = Array.from({ length: 300 }, (_, index) => makeAttempt(workspace, 0, index));
      let accepted = 0;
      const terminations: Promise<number>[] = [];
      // Connections are cut twice while requests are in flight (busy and idle ones alike).
      await inParallel(attempts, 20, async (attempt) => {
        await sendAttempt(running.url, workspace.apiKey, attempt);
        if (attempt.status === 202) {
          accepted += 1;
          if (accepted === 60 || accepted === 150) terminations.push(terminateConnections(env.DATABASE_URL!));
        }
      });
      const statuses = attempts.map((attempt) => attempt.status);
      expect(terminations, `statuses: ${JSON.stringify(statuses)}\n${running.output()}`).toHaveLength(2);
      const ended = await Promise.all(terminations);
      expect(ended.every((count) => count > 0)).toBe(true);
      // And once more while the pool sits idle: an idle connection closed by the server must not
      // take the process down.
      expect(await terminateConnections(env.DATABASE_URL!)).toBeGreaterThan(0);
      // A request may still meet a connection on its way out (5xx); one of the next few is accepted.
      let acceptedAfterIdleCut = false;
      for (let tries = 0; tries < 10 && !acceptedAfterIdleCut; tries += 1) {
        const attempt = makeAttempt(workspace, 0, attempts.length);
        attempts.push(attempt);
        await sendAttempt(running.url, workspace.apiKey, attempt);
        acceptedAfterIdleCut = attempt.status === 202;
      }
      expect({ exitCode: running.child.exitCode, signal: running.child.signalCode }, running.output()).toEqual({ exitCode: null, signal: null });
      expect(acceptedAfterIdleCut).toBe(true);
      // A request caught by a cut may fail (5xx) but never hangs up without an answer.
      expect(attempts.filter((attempt) => attempt.status === null || (attempt.status !== 202 && attempt.status < 500)).map((attempt) => attempt.status)).toEqual([]);

      const acknowledged = new Set<string>();
      await retryAll(running.url, workspace, attempts, acknowledged);
      await expectBooksMatch(env, workspace, acknowledged);
      await running.kill();
    },
    300_000,
  );
});
