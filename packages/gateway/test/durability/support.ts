/**
 * Shared by the durability suites: real gateway subprocesses (`tms api`, `tms migrate`) and an
 * audit of a workspace's money straight from the database. No mocks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { MIGRATIONS_DIRECTORY, migrate } from '../../src/store/migrate.ts';
import type { Database, LedgerRow, WorkspaceRow } from '../../src/store/schema.ts';
import { createTestDatabase, gatewayEnvironment, httpRequest, type StoreKind, type TestGateway } from '../harness.ts';
import { freePort } from '../../../../test/ports.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const TMS_BIN = fileURLToPath(new URL('../../bin/tms.js', import.meta.url));

export { freePort };

/** The child's environment: ours without anything that would point it at another database or config. */
export function childEnvironment(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith('TMS_') || name === 'DATABASE_URL' || name === 'NODE_OPTIONS' || name === 'PORT') continue;
    base[name] = value;
  }
  return { ...base, ...env };
}

export interface Subprocess {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last part of stdout and stderr, for failure messages. */
  output(): string;
  /** SIGKILL if still running, then wait for the exit. */
  kill(): Promise<void>;
}

const OUTPUT_TAIL = 20_000;

/** Starts `node packages/gateway/bin/tms.js <args>` with exactly this environment (on top of PATH etc.). */
export function spawnTms(args: string[], env: Record<string, string>): Subprocess {
  const child = spawn(process.execPath, [TMS_BIN, ...args], { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    exited,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface GatewayProcess extends Subprocess {
  url: string;
  port: number;
}

/**
 * Starts `tms api` on a free port and waits (generously) until /readyz answers 200 and our
 * operator token is accepted there: that makes sure the answer comes from our process and not from
 * another test's server that took the port in the meantime. A port lost that way is retried.
 */
export async function startGatewayProcess(env: Record<string, string>, timeoutMs = 90_000): Promise<GatewayProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const handle = spawnTms(['api'], { ...env, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    void handle.exited.then((value) => {
      exit = value;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (exit) {
        if (attempt < 3 && handle.output().includes('EADDRINUSE')) break;
        throw new Error(`tms api exited before it was ready (${JSON.stringify(exit)}):\n${handle.output()}`);
      }
      try {
        const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
        await ready.arrayBuffer();
        // Our operator token only works on a gateway started with our environment.
        const ours = await fetch(`${url}/admin/v1/workspaces?limit=1`, { headers: { authorization: `Bearer ${env.TMS_ADMIN_TOKEN}` }, signal: AbortSignal.timeout(5_000) });
        await ours.arrayBuffer();
        if (ready.status === 200 && ours.status === 200 && !exit) return { ...handle, url, port };
      } catch {
        // not answering yet
      }
      if (Date.now() > deadline) {
        await handle.kill();
        throw new Error(`tms api was not ready within ${timeoutMs} ms:\n${handle.output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * What seedWorkspace needs of a gateway (it only calls admin()), for a gateway that runs in
 * another process.
 */
export function remoteGateway(url: string, adminToken: string): TestGateway {
  const view: Pick<TestGateway, 'url' | 'request' | 'admin'> = {
    url,
    request: (method, path, options) => httpRequest(url, method, path, options),
    admin: (method, path, body) => httpRequest(url, method, `/admin/v1${path}`, { key: adminToken, body }),
  };
  return view as TestGateway;
}

export interface WorkspaceBooks {
  workspace: WorkspaceRow;
  messageIds: string[];
  ledger: LedgerRow[];
}

/** Reads a workspace, its message ids and its ledger straight from the database. */
export async function readBooks(db: Kysely<Database>, workspaceId: string): Promise<WorkspaceBooks> {
  const workspace = await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow();
  const messageIds = (await db.selectFrom('messages').select('id').where('workspace_id', '=', workspaceId).execute()).map((row) => row.id);
  const ledger = await db.selectFrom('wallet_ledger').selectAll().where('workspace_id', '=', workspaceId).execute();
  return { workspace, messageIds, ledger };
}

/** The same, through a connection of our own to the database a gateway environment points at. */
export async function readBooksFromEnvironment(env: Record<string, string>, workspaceId: string): Promise<WorkspaceBooks> {
  const store = openStore(parseConfig(env).database);
  try {
    return await readBooks(store.db, workspaceId);
  } finally {
    await store.close();
  }
}

/**
 * Everything that must hold for a wallet that was topped up once and then only charged at one
 * price: returns the list of problems (empty when the books are right).
 */
export function auditBooks(books: WorkspaceBooks, expected: { topUp: number; price: number }): string[] {
  const problems: string[] = [];
  const { workspace, messageIds, ledger } = books;
  const rows = messageIds.length;
  if (new Set(messageIds).size !== rows) problems.push('duplicate message ids');
  if (workspace.balance !== expected.topUp - expected.price * rows) {
    problems.push(`balance ${workspace.balance} != top-up ${expected.topUp} - ${expected.price} x ${rows} message rows`);
  }
  if (workspace.balance < 0) problems.push(`negative balance ${workspace.balance}`);
  if (workspace.messages_accepted !== rows) problems.push(`messages_accepted ${workspace.messages_accepted} != ${rows} message rows`);
  const ledgerSum = ledger.reduce((sum, entry) => sum + entry.amount, 0);
  if (ledgerSum !== workspace.balance) problems.push(`ledger sums to ${ledgerSum}, balance is ${workspace.balance}`);
  const charged = ledger.filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.message_count, 0);
  const refunded = ledger.filter((entry) => entry.kind === 'refund').reduce((sum, entry) => sum + entry.message_count, 0);
  if (charged - refunded !== rows) problems.push(`ledger charges ${charged} - refunds ${refunded} messages != ${rows} message rows`);
  for (const entry of ledger) {
    if (entry.kind === 'charge' && entry.amount !== -expected.price * entry.message_count) {
      problems.push(`charge ${entry.id} of ${entry.amount} for ${entry.message_count} messages`);
    }
  }
  // Only one top-up and then charges: in commit order the balance falls strictly, so ordering by
  // balance_after (highest first) is the commit order and each entry must follow from the last.
  const ordered = [...ledger].sort((a, b) => b.balance_after - a.balance_after);
  let previous: number | null = null;
  for (const entry of ordered) {
    if (entry.balance_after < 0) problems.push(`ledger ${entry.id} has balance_after ${entry.balance_after}`);
    const expectedAfter: number = previous === null ? entry.amount : previous + entry.amount;
    if (entry.balance_after !== expectedAfter) problems.push(`ledger ${entry.id}: balance_after ${entry.balance_after}, expected ${expectedAfter}`);
    previous = entry.balance_after;
  }
  if (ordered[0]?.kind !== 'top_up' || ordered.filter((entry) => entry.kind === 'top_up').length !== 1) {
    problems.push('expected exactly one top-up, first in the ledger');
  }
  return problems;
}

/** Runs tasks with at most `limit` in flight; results in task order. */
export async function inParallel<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await task(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** A new store as it stood before one migration, for a test of that migration on existing rows. */
export interface StoreBeforeMigration {
  store: Store;
  /** Applies that migration and every later one; returns the versions applied. */
  upgrade(): Promise<string[]>;
  close(): Promise<void>;
}

/** A new store with every migration numbered below `number` applied, and none from it on. */
export async function openStoreBeforeMigration(kind: StoreKind, number: number, now: number): Promise<StoreBeforeMigration> {
  const before = mkdtempSync(join(tmpdir(), `tms-migrations-before-${number}-`));
  cpSync(MIGRATIONS_DIRECTORY, before, { recursive: true, filter: (source) => Number(/\/(\d{4})_[^/]*$/.exec(source)?.[1] ?? 0) < number });
  const database = await createTestDatabase(kind);
  const store = openStore(parseConfig(gatewayEnvironment(database)).database);
  await migrate(store, now, before);
  return {
    store,
    upgrade: () => migrate(store, now),
    close: async () => {
      await store.close();
      await database.drop();
      rmSync(before, { recursive: true, force: true });
    },
  };
}
