/**
 * `tms admin backup FILE` against a running gateway: the real `tms api` takes sends over HTTP
 * without pause while the backup runs in another process; the copy is then restored into a fresh
 * data directory, a gateway is started on it, and every message acknowledged before the backup
 * began must be there, in a database whose books balance and that SQLite finds intact.
 * Also the refusals: an existing file, the live database, PostgreSQL.
 * GET /admin/v1/backup: the same copy streamed while sends go on, nothing left on the server's
 * disk or open in the process, whether the download ends or is cut off; refused on PostgreSQL.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { BACKUP_BUSY_RETRY_AFTER_SECONDS, DOWNLOAD_DIRECTORY_PREFIX } from '../../src/services/admin/database-backup.ts';
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

describe('backups and the disk on SQLite', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let gateway: GatewayProcess | null = null;
  const scratch: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    env = gatewayEnvironment(database);
    const migrated = await runTms(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
  });
  afterAll(async () => {
    await gateway?.kill();
    await database?.drop();
    for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
  });

  it('refuses a backup its file system has no room for, saying how much it needs, and writes nothing', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tms-backup-space-'));
    scratch.push(directory);
    const target = join(directory, 'backup.sqlite');
    const wal = join(database.env.TMS_DATA_DIR!, 'tms.sqlite-wal');
    const { bavail, bsize } = statfsSync(directory);
    // A write-ahead log grown (sparse: it takes no space) past the free space, as after a burst of writes.
    // SQLite reads a log only as far as its valid frames, and the command's own connection removes it on close.
    writeFileSync(wal, '');
    truncateSync(wal, bavail * bsize + 1024 ** 3);
    const refused = await runTms(['admin', 'backup', target], env);
    expect(refused.code, refused.stdout).toBe(1);
    expect(refused.stderr).toMatch(/not enough free space for a backup in .+: its file system has \d+ MiB free, and a copy of the database \(with its write-ahead log\) and a margin need \d+ MiB/);
    expect(readdirSync(directory)).toEqual([]);
    rmSync(wal, { force: true });
    // With room, the same backup is taken.
    const taken = await runTms(['admin', 'backup', target], env);
    expect(taken.code, taken.stderr).toBe(0);
  }, 120_000);

  it('tms api removes the download copies an earlier process left in the data directory when it starts, and says so', async () => {
    const dataDir = database.env.TMS_DATA_DIR!;
    const leftover = join(dataDir, `${DOWNLOAD_DIRECTORY_PREFIX}AbC123`);
    mkdirSync(leftover, { mode: 0o700 });
    writeFileSync(join(leftover, '.tms-backup.sqlite.partial-4242-1'), 'a copy cut short by a crash');
    const unrelated = join(dataDir, 'backup-download-notes.txt');
    writeFileSync(unrelated, 'not ours to remove');
    gateway = await startGatewayProcess({ ...env, TMS_LOG_LEVEL: 'warn' });
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(unrelated)).toBe(true);
    expect(gateway.output()).toContain('removed backup download copies left by a process stopped during a download');
    expect(gateway.output()).toContain(`${DOWNLOAD_DIRECTORY_PREFIX}AbC123`);
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
/** More filler, so that the copy itself lasts long enough to be cut off in the middle (about 300 MB in all). */
const COPY_FILLER_ROWS = 2_500;

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
  // The newest entries are enough: the filler below is the oldest part of the log.
  const backupEntries = async () => ((await gateway.admin('GET', '/audit?limit=50')).body.entries as { action: string; after: Record<string, unknown> }[]).filter((entry) => entry.action === 'database.backup');
  /** The bytes copied so far into a download's partial file (0 before the copy begins). */
  const copied = (): number => {
    for (const directory of leftInDataDirectory()) {
      for (const name of readdirSync(join(gateway.config.dataDir, directory))) {
        if (name.includes('.partial-') && !name.endsWith('-journal')) return statSync(join(gateway.config.dataDir, directory, name), { throwIfNoEntry: false })?.size ?? 0;
      }
    }
    return 0;
  };
  /** Fills the audit log with `rows` rows of FILLER_ROW_BYTES, so that copying the database takes a while. */
  async function addFiller(rows: number): Promise<void> {
    const filler = 'x'.repeat(FILLER_ROW_BYTES);
    const first = (await gateway.runtime.store.db.selectFrom('audit_log').select(({ fn }) => fn.countAll<number>().as('count')).where('action', '=', 'test.filler').executeTakeFirstOrThrow()).count;
    for (let offset = 0; offset < rows; offset += 50) {
      const batch = Array.from({ length: Math.min(50, rows - offset) }, (_, index) => ({
        // Ids below every real entry's: the filler reads as the oldest part of the log.
        id: `act_00000000000000${String(Number(first) + offset + index).padStart(12, '0')}`,
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
      await gateway.runtime.store.db.insertInto('audit_log').values(batch).execute();
    }
  }

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

      // Audited once the answer has ended, as sent whole.
      const [entry] = await waitFor(backupEntries, (entries) => entries.length === 1, 'the download to be audited');
      expect(entry).toMatchObject({
        workspace_id: null,
        actor: { kind: 'operator', id: null, name: 'bootstrap token' },
        target: null,
        before: null,
        after: { destination: 'download', completed: true, messages, bytes: body.length, started_at: response.headers.get('x-backup-started-at') },
      });
      expect(JSON.stringify(entry)).not.toContain(gateway.config.adminToken!);
    },
    300_000,
  );

  it.runIf(kind === 'sqlite')('closes the copy and leaves nothing on disk when the client goes away mid-download, one download at a time', async () => {
    await addFiller(FILLER_ROWS);
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
    // Its copy still takes disk space: another backup meanwhile is refused, to be retried later.
    const meanwhile = await gateway.admin('GET', '/backup');
    expectError(meanwhile, 'service_unavailable', /one at a time/);
    expect(meanwhile.headers.get('retry-after')).toBe(String(BACKUP_BUSY_RETRY_AFTER_SECONDS));
    expect(meanwhile.headers.get('content-disposition')).toBeNull();

    request.destroy();
    await waitFor(openCopies, (open) => open.length === 0, 'the copy to be closed once the client went away');
    expect(leftInDataDirectory()).toEqual([]);
    // Audited once it ended, as not sent whole; the copy itself was finished.
    const [entry] = await waitFor(backupEntries, (entries) => entries.length === backupsBefore + 1, 'the cut-off download to be audited');
    expect(entry!.after).toMatchObject({ destination: 'download', completed: false, bytes: Number(response.headers['content-length']), messages: expect.any(Number) });
  }, 120_000);

  it.runIf(kind === 'sqlite')('stops the copy and removes it when the client goes away during the copy, and audits it as not completed', async () => {
    // A few hundred MB: the copy takes long enough to be cut off while most of it is still to do.
    await addFiller(COPY_FILLER_ROWS);
    const backupsBefore = (await backupEntries()).length;

    const request = httpGet(`${gateway.url}/admin/v1/backup`, { headers: { authorization: `Bearer ${gateway.config.adminToken!}` } });
    request.on('error', () => undefined);
    let answered = false;
    request.once('response', () => (answered = true));
    // Cut off as soon as the copy has begun.
    while (copied() === 0) {
      expect(answered).toBe(false);
      await new Promise((resolve) => setImmediate(resolve));
    }
    request.destroy();

    await waitFor(leftInDataDirectory, (left) => left.length === 0, 'the partial copy to be removed');
    expect(answered).toBe(false);
    expect(openCopies()).toEqual([]);
    // Audited as not completed, with no size: the copy was stopped before it was finished.
    const [entry] = await waitFor(backupEntries, (entries) => entries.length === backupsBefore + 1, 'the abandoned download to be audited');
    expect(entry!.after).toEqual({ destination: 'download', completed: false, messages: null, bytes: null, started_at: expect.any(String) });

    // The slot is free again: the next download begins (and is cut off at once).
    const next = await new Promise<IncomingMessage>((resolve, reject) => {
      const again = httpGet(`${gateway.url}/admin/v1/backup`, { headers: { authorization: `Bearer ${gateway.config.adminToken!}` } });
      again.once('response', (answer) => {
        resolve(answer);
        again.destroy();
      });
      again.once('error', reject);
    });
    expect(next.statusCode).toBe(200);
    await waitFor(openCopies, (open) => open.length === 0, 'the second copy to be closed');
    await waitFor(backupEntries, (entries) => entries.length === backupsBefore + 2, 'the second download to be audited');
  }, 180_000);

  // Last: it stops the gateway.
  it.runIf(kind === 'sqlite')('stops a copy in progress when the service stops, and leaves nothing behind', async () => {
    const backupsBefore = (await backupEntries()).length;
    const request = httpGet(`${gateway.url}/admin/v1/backup`, { headers: { authorization: `Bearer ${gateway.config.adminToken!}` } });
    request.on('error', () => undefined);
    let answered = false;
    request.once('response', (answer) => {
      answered = true;
      answer.resume();
    });
    while (copied() === 0) {
      expect(answered).toBe(false);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // As on SIGTERM: the runtime closes, the copy first.
    await gateway.service.stop();
    expect(leftInDataDirectory()).toEqual([]);
    expect(openCopies()).toEqual([]);
    const store = openStore(gateway.config.database);
    try {
      const entries = await store.db.selectFrom('audit_log').select('after_state').where('action', '=', 'database.backup').orderBy('id', 'desc').execute();
      expect(entries.length).toBe(backupsBefore + 1);
      expect(JSON.parse(entries[0]!.after_state!)).toMatchObject({ destination: 'download', completed: false, messages: null, bytes: null });
    } finally {
      await store.close();
    }
  }, 180_000);

  it.runIf(kind === 'postgres')('is refused on PostgreSQL, pointing at pg_dump and point-in-time recovery, and takes nothing', async () => {
    const response = await gateway.admin('GET', '/backup');
    expectError(response, 'invalid_request', /pg_dump/);
    expect(response.body.error.message).toContain('point-in-time recovery');
    expect(response.headers.get('content-disposition')).toBeNull();
    expect(leftInDataDirectory()).toEqual([]);
    expect(await backupEntries()).toEqual([]);
  });
});
