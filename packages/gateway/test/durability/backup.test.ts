/**
 * `tms admin backup FILE` against a running gateway: the real `tms api` takes sends over HTTP
 * without pause while the backup runs in another process; the copy is then restored into a fresh
 * data directory, a gateway is started on it, and every message acknowledged before the backup
 * began must be there, in a database whose books balance and that SQLite finds intact.
 * Also the refusals: an existing file, the live database, PostgreSQL.
 * GET /admin/v1/backup: the same copy streamed while sends go on, nothing left on the server's
 * disk or open in the process, whether the download ends or is cut off; refused on PostgreSQL.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { DOWNLOAD_DIRECTORY_PREFIX } from '../../src/services/admin/database-backup.ts';
import { openStore } from '../../src/store/database.ts';
import { openSqliteDatabase } from '../../src/store/sqlite-driver.ts';
import { expectError } from '../api/helpers.ts';
import {
  STORE_KINDS,
  VALID_DATA,
  createTestDatabase,
  gatewayEnvironment,
  httpRequest,
  seedWorkspace,
  startTestGateway,
  type SeededWorkspace,
  type TestDatabase,
  type TestGateway,
} from '../harness.ts';
import { runTms } from '../operator/processes.ts';
import { waitFor } from '../wait-for.ts';
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

    // Each backup written is in the audit log, with the person at the keyboard and where it went.
    const store = openStore(parseConfig(env).database);
    try {
      const audited = await store.db.selectFrom('audit_log').selectAll().where('action', '=', 'database.backup').execute();
      const forcedEntry = audited.find((row) => JSON.parse(row.after_state ?? '{}').file === target);
      expect(forcedEntry).toMatchObject({ workspace_id: null, actor_kind: 'operator', actor_label: expect.stringMatching(/^tms admin \(.+@.+\)$/), before_state: null });
      expect(JSON.parse(forcedEntry!.after_state!)).toMatchObject({ destination: 'file', messages: expect.any(Number), bytes: statSync(target).size });
    } finally {
      await store.close();
    }
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

/** Rows of filler in the audit log, so that a download is far larger than a loopback connection buffers. */
const FILLER_ROWS = 500;
const FILLER_ROW_BYTES = 100_000;

describe.each(STORE_KINDS)('GET /admin/v1/backup (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  const scratch: string[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway, { balance: TOP_UP, price: PRICE });
  });
  afterAll(async () => {
    await gateway?.close();
    for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
  });

  /** What downloads left in the data directory. */
  const leftInDataDirectory = (): string[] => readdirSync(gateway.config.dataDir).filter((name) => name.startsWith(DOWNLOAD_DIRECTORY_PREFIX));
  /** Descriptors this process (the gateway runs in it) holds open on a download's copy. */
  const openCopies = (): string[] =>
    readdirSync('/proc/self/fd')
      .map((descriptor) => {
        try {
          return readlinkSync(`/proc/self/fd/${descriptor}`);
        } catch {
          return '';
        }
      })
      .filter((target) => target.includes(`/${DOWNLOAD_DIRECTORY_PREFIX}`));
  const backupEntries = async () => ((await gateway.admin('GET', '/audit?limit=500')).body.entries as { action: string }[]).filter((entry) => entry.action === 'database.backup');

  it.runIf(kind === 'sqlite')(
    'streams a consistent copy while sends are accepted, holding every message answered 202 before the download began',
    async () => {
      const load = startLoad(gateway.url, workspace);
      let response: Response;
      let body: Buffer;
      let acknowledgedBefore: Set<string>;
      try {
        await waitUntil(() => load.acknowledged.length >= ACKNOWLEDGED_BEFORE_BACKUP, `${ACKNOWLEDGED_BEFORE_BACKUP} acknowledged sends`);
        acknowledgedBefore = new Set(load.acknowledged);
        response = await fetch(`${gateway.url}/admin/v1/backup`, { headers: { authorization: `Bearer ${gateway.config.adminToken!}` } });
        body = Buffer.from(await response.arrayBuffer());
        const afterDownload = load.acknowledged.length;
        await waitUntil(() => load.acknowledged.length >= afterDownload + 50, '50 more acknowledged sends after the download');
      } finally {
        await load.stop();
      }
      expect(load.refused).toEqual([]);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/vnd.sqlite3');
      expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="tms-backup-\d{8}T\d{6}Z\.sqlite"$/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(Number(response.headers.get('content-length'))).toBe(body.length);
      const messages = Number(response.headers.get('x-backup-messages'));
      expect(response.headers.get('x-backup-started-at')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

      const directory = mkdtempSync(join(tmpdir(), 'tms-backup-download-'));
      scratch.push(directory);
      const file = join(directory, 'downloaded.sqlite');
      writeFileSync(file, body, { mode: 0o600 });
      const copy = openSqliteDatabase(file, { readonly: true, fileMustExist: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        const ids = new Set((copy.prepare('SELECT id FROM messages').all() as { id: string }[]).map((row) => row.id));
        expect(ids.size).toBe(messages);
        expect([...acknowledgedBefore].filter((id) => !ids.has(id))).toEqual([]);
      } finally {
        copy.close();
      }
      expect(leftInDataDirectory()).toEqual([]);
      expect(openCopies()).toEqual([]);

      const [entry] = await backupEntries();
      expect(entry).toMatchObject({
        workspace_id: null,
        actor: { kind: 'operator', id: null, name: 'bootstrap token' },
        target: null,
        before: null,
        after: { destination: 'download', messages, bytes: body.length, started_at: response.headers.get('x-backup-started-at') },
      });
      expect(JSON.stringify(entry)).not.toContain(gateway.config.adminToken!);
    },
    300_000,
  );

  it.runIf(kind === 'sqlite')('closes the copy and leaves nothing on disk when the client goes away mid-download', async () => {
    const filler = 'x'.repeat(FILLER_ROW_BYTES);
    for (let first = 0; first < FILLER_ROWS; first += 50) {
      const rows = Array.from({ length: 50 }, (_, index) => ({
        // Ids below every real entry's: the filler reads as the oldest part of the log.
        id: `act_00000000000000${String(first + index).padStart(12, '0')}`,
        workspace_id: null,
        actor_kind: 'operator' as const,
        actor_id: null,
        actor_label: 'test filler',
        action: 'test.filler',
        target: null,
        before_state: null,
        after_state: JSON.stringify({ filler }),
        created_at: 0,
      }));
      await gateway.runtime.store.db.insertInto('audit_log').values(rows).execute();
    }
    const backupsBefore = (await backupEntries()).length;

    const request = httpGet(`${gateway.url}/admin/v1/backup`, { headers: { authorization: `Bearer ${gateway.config.adminToken!}` } });
    request.on('error', () => undefined);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
    });
    response.on('error', () => undefined);
    response.pause();
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers['content-length'])).toBeGreaterThan(FILLER_ROWS * FILLER_ROW_BYTES);
    // Unread, the answer cannot be all sent: the gateway still reads the copy, which has no name left.
    expect(openCopies()).toEqual([expect.stringMatching(/ \(deleted\)$/)]);
    expect(leftInDataDirectory()).toEqual([]);

    request.destroy();
    await waitFor(openCopies, (open) => open.length === 0, 'the copy to be closed once the client went away');
    expect(leftInDataDirectory()).toEqual([]);
    expect((await backupEntries()).length).toBe(backupsBefore + 1);
  }, 120_000);

  it.runIf(kind === 'postgres')('is refused on PostgreSQL, pointing at pg_dump and point-in-time recovery, and takes nothing', async () => {
    const response = await gateway.admin('GET', '/backup');
    expectError(response, 'invalid_request', /pg_dump/);
    expect(response.body.error.message).toContain('point-in-time recovery');
    expect(response.headers.get('content-disposition')).toBeNull();
    expect(leftInDataDirectory()).toEqual([]);
    expect(await backupEntries()).toEqual([]);
  });
});
