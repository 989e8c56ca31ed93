/**
 * `tms admin backup FILE` against a running gateway: the real `tms api` takes sends over HTTP
 * without pause while the backup runs in another process; the copy is then restored into a fresh
 * data directory, a gateway is started on it, and every message acknowledged before the backup
 * began must be there, in a database whose books balance and that SQLite finds intact.
 * Also the refusals: an existing file, the live database, PostgreSQL.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/store/sqlite-driver.ts';
import { STORE_KINDS, VALID_DATA, createTestDatabase, gatewayEnvironment, httpRequest, seedWorkspace, type SeededWorkspace, type TestDatabase } from '../harness.ts';
import { runTms } from '../operator/processes.ts';
import { auditBooks, inParallel, readBooksFromEnvironment, remoteGateway, startGatewayProcess, type GatewayProcess } from './support.ts';

const TOP_UP = 100_000_000;
const PRICE = 300;
const IN_FLIGHT = 16;
/** 202s to have before the backup starts, so that there is something to find after the restore. */
const ACKNOWLEDGED_BEFORE_BACKUP = 300;

interface Load {
  /** Every msg_id answered 202 so far, in the order the answers arrived. */
  acknowledged: string[];
  /** Answers other than 202 (there must be none). */
  refused: { status: number; text: string }[];
  stop(): Promise<void>;
}

/** Keeps IN_FLIGHT single sends going until stopped. */
function startLoad(url: string, workspace: SeededWorkspace): Load {
  const acknowledged: string[] = [];
  const refused: { status: number; text: string }[] = [];
  let stopping = false;
  let sequence = 0;
  const lane = async (): Promise<void> => {
    while (!stopping) {
      sequence += 1;
      const phone = `09${String(10_000_000 + sequence).slice(-8)}`;
      const response = await httpRequest(url, 'POST', '/api/v1/messages/send', { key: workspace.apiKey, body: { template_id: workspace.templateId, phone, template_data: VALID_DATA } });
      if (response.status === 202) acknowledged.push(response.body.msg_id as string);
      else refused.push({ status: response.status, text: response.text });
    }
  };
  const lanes = Array.from({ length: IN_FLIGHT }, () => lane());
  return {
    acknowledged,
    refused,
    stop: async () => {
      stopping = true;
      await Promise.all(lanes);
    },
  };
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('tms admin backup on SQLite', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let gateway: GatewayProcess | null = null;
  let restored: GatewayProcess | null = null;
  const scratch: string[] = [];

  function scratchDirectory(): string {
    const directory = mkdtempSync(join(tmpdir(), 'tms-backup-test-'));
    scratch.push(directory);
    return directory;
  }

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    env = gatewayEnvironment(database);
  });

  afterAll(async () => {
    await restored?.kill();
    await gateway?.kill();
    await database?.drop();
    for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
  });

  it(
    'copies a consistent database while sends go on, and the restored copy holds every message acknowledged before it began',
    async () => {
      gateway = await startGatewayProcess(env);
      const workspace = await seedWorkspace(remoteGateway(gateway.url, env.TMS_ADMIN_TOKEN!), { balance: TOP_UP, price: PRICE });
      const load = startLoad(gateway.url, workspace);
      let backupOutput: string;
      let acknowledgedBefore: Set<string>;
      let acknowledgedDuring: number;
      const backupDirectory = scratchDirectory();
      const backupFile = join(backupDirectory, 'tms-backup.sqlite');
      try {
        await waitUntil(() => load.acknowledged.length >= ACKNOWLEDGED_BEFORE_BACKUP, `${ACKNOWLEDGED_BEFORE_BACKUP} acknowledged sends`);
        acknowledgedBefore = new Set(load.acknowledged);
        const backup = await runTms(['admin', 'backup', backupFile, '--json'], env);
        acknowledgedDuring = load.acknowledged.length - acknowledgedBefore.size;
        expect(backup.code, backup.stderr + backup.stdout).toBe(0);
        backupOutput = backup.stdout;
        // The service keeps taking sends after the backup, too.
        const afterBackup = load.acknowledged.length;
        await waitUntil(() => load.acknowledged.length >= afterBackup + 50, '50 more acknowledged sends after the backup');
      } finally {
        await load.stop();
      }
      expect(load.refused).toEqual([]);
      // Writers were not stopped for the backup: sends were acknowledged while it ran.
      expect(acknowledgedDuring).toBeGreaterThan(0);

      const report = JSON.parse(backupOutput);
      expect(report.file).toBe(backupFile);
      expect(report.bytes).toBe(statSync(backupFile).size);
      expect(report.messages).toBeGreaterThanOrEqual(acknowledgedBefore.size);
      expect(report.messages).toBeLessThan(load.acknowledged.length + IN_FLIGHT);
      expect(statSync(backupFile).mode & 0o777).toBe(0o600);
      await gateway.kill();
      gateway = null;

      // Restore: the file alone, as tms.sqlite of a fresh data directory, with the same secrets.
      const restoredDirectory = scratchDirectory();
      copyFileSync(backupFile, join(restoredDirectory, 'tms.sqlite'));
      const restoredEnv = { ...env, TMS_DATA_DIR: restoredDirectory };
      restored = await startGatewayProcess(restoredEnv);
      const restoredUrl = restored.url;
      const lookups = await inParallel([...acknowledgedBefore], 16, async (id) => {
        const record = await httpRequest(restoredUrl, 'GET', `/api/v1/messages/${id}`, { key: workspace.apiKey });
        return { id, status: record.status, state: record.body?.status as unknown };
      });
      expect(lookups.filter((lookup) => lookup.status !== 200 || lookup.state !== 'queued')).toEqual([]);
      // The API key (stored hashed and encrypted under the master key) works in the restored store.
      const listed = await httpRequest(restoredUrl, 'GET', '/api/v1/messages?limit=1', { key: workspace.apiKey });
      expect(listed.status).toBe(200);
      await restored.kill();
      restored = null;

      // One snapshot: every message in the copy was charged in it, and the ledger sums to the balance.
      const books = await readBooksFromEnvironment(restoredEnv, workspace.workspaceId);
      expect(books.messageIds.length).toBe(report.messages);
      for (const id of acknowledgedBefore) expect(books.messageIds.includes(id), id).toBe(true);
      expect(auditBooks(books, { topUp: TOP_UP, price: PRICE })).toEqual([]);
      const copy = openSqliteDatabase(join(restoredDirectory, 'tms.sqlite'), { readonly: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(copy.pragma('foreign_key_check')).toEqual([]);
      } finally {
        copy.close();
      }
    },
    300_000,
  );

  it('refuses to overwrite a file without --force, replaces it with --force, and never writes over the live database', async () => {
    const directory = scratchDirectory();
    const target = join(directory, 'existing.sqlite');
    writeFileSync(target, 'an older backup', { mode: 0o644 });

    const refused = await runTms(['admin', 'backup', target], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already exists; pass --force');
    expect(readFileSync(target, 'utf8')).toBe('an older backup');

    const forced = await runTms(['admin', 'backup', target, '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(new RegExp(`file\\s+${target}`));
    expect(forced.stdout).toMatch(/messages\s+\d+/);
    expect(forced.stdout).toMatch(/bytes\s+\d+/);
    expect(statSync(target).mode & 0o777).toBe(0o600);

    const live = join(database.env.TMS_DATA_DIR!, 'tms.sqlite');
    const sizeBefore = statSync(live).size;
    const overLive = await runTms(['admin', 'backup', live, '--force'], env);
    expect(overLive.code).toBe(1);
    expect(overLive.stderr).toContain('is the live database');
    expect(statSync(live).size).toBe(sizeBefore);

    const missingFile = await runTms(['admin', 'backup'], env);
    expect(missingFile.code).toBe(1);
    expect(missingFile.stderr).toContain('FILE is required');

    const missingDirectory = await runTms(['admin', 'backup', join(directory, 'nowhere', 'b.sqlite')], env);
    expect(missingDirectory.code).toBe(1);
    expect(missingDirectory.stderr).toContain('does not exist');

    const help = await runTms(['admin', '--help'], env);
    expect(help.stdout).toContain('backup FILE [--force]');
  }, 120_000);
});

describe.runIf(STORE_KINDS.includes('postgres'))('tms admin backup on PostgreSQL', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('refuses, and points at pg_dump and point-in-time recovery', async () => {
    const env = gatewayEnvironment(database);
    const target = join(database.env.TMS_DATA_DIR!, 'backup.sqlite');
    const result = await runTms(['admin', 'backup', target], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('pg_dump');
    expect(result.stderr).toContain('point-in-time recovery');
    expect(existsSync(target)).toBe(false);
  }, 120_000);
});
