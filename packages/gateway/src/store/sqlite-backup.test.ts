import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BackupAbortedError,
  BackupDirectoryMissingError,
  BackupSpaceInsufficientError,
  BackupTargetExistsError,
  BackupTargetIsLiveDatabaseError,
  backupSqliteDatabase,
  backupSqliteDatabaseOffThread,
  spaceNeededForCopy,
} from './sqlite-backup.ts';
import { openSqliteDatabase, type SqliteConnection } from './sqlite-driver.ts';

describe('backupSqliteDatabase', () => {
  const directories: string[] = [];
  const connections: SqliteConnection[] = [];
  afterEach(() => {
    for (const connection of connections.splice(0)) connection.close();
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  /** A live WAL database with a messages table, held open like the service holds it. */
  function liveDatabase(messages: number, bodyBytes = 100): { directory: string; file: string; live: SqliteConnection } {
    const directory = mkdtempSync(join(tmpdir(), 'tms-backup-'));
    directories.push(directory);
    const file = join(directory, 'tms.sqlite');
    const live = openSqliteDatabase(file);
    connections.push(live);
    live.pragma('journal_mode = WAL');
    live.exec('CREATE TABLE messages (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
    const insert = live.prepare('INSERT INTO messages (id, body) VALUES (?, ?)');
    live.transaction(() => {
      for (let index = 0; index < messages; index += 1) insert.run(`msg_${index}`, 'x'.repeat(bodyBytes));
    })();
    return { directory, file, live };
  }

  it('writes a self-contained copy with mode 0600 and counts its messages', async () => {
    const { directory, file } = liveDatabase(1_000);
    const target = join(directory, 'backup.sqlite');
    const result = await backupSqliteDatabase({ source: file, target, overwrite: false });
    expect(result).toMatchObject({ file: target, messages: 1_000, bytes: statSync(target).size });
    expect(statSync(target).mode & 0o777).toBe(0o600);
    // No -wal, -shm, journal or partial file is left beside it.
    expect(readdirSync(directory).filter((name) => !name.startsWith('tms.sqlite')).sort()).toEqual(['backup.sqlite']);
    const copy = openSqliteDatabase(target, { readonly: true });
    connections.push(copy);
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
  });

  it('holds one snapshot while another connection keeps committing, across many steps', async () => {
    // About 24 MB: several thousand pages, so the copy takes several steps with commits between them.
    const { directory, file } = liveDatabase(20_000, 1_000);
    const writer = openSqliteDatabase(file);
    connections.push(writer);
    const insert = writer.prepare('INSERT INTO messages (id, body) VALUES (?, ?)');
    let written = 0;
    // Commits between the backup's steps (better-sqlite3 yields to the event loop between them).
    const writing = setInterval(() => {
      insert.run(`late_${written}`, 'y');
      written += 1;
    }, 0);
    try {
      const result = await backupSqliteDatabase({ source: file, target: join(directory, 'backup.sqlite'), overwrite: false });
      expect(result.pages).toBeGreaterThan(5_000);
      expect(written).toBeGreaterThan(0);
      expect(result.messages).toBeGreaterThanOrEqual(20_000);
      expect(result.messages).toBeLessThanOrEqual(20_000 + written);
    } finally {
      clearInterval(writing);
    }
  });

  it('refuses an existing target unless told to replace it', async () => {
    const { directory, file } = liveDatabase(3);
    const target = join(directory, 'backup.sqlite');
    writeFileSync(target, 'precious', { mode: 0o644 });
    await expect(backupSqliteDatabase({ source: file, target, overwrite: false })).rejects.toBeInstanceOf(BackupTargetExistsError);
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(readdirSync(directory).filter((name) => name.includes('partial'))).toEqual([]);

    const replaced = await backupSqliteDatabase({ source: file, target, overwrite: true });
    expect(replaced.messages).toBe(3);
    expect(statSync(target).mode & 0o777).toBe(0o600);
  });

  it('never writes over the live database or its companions, even when told to replace', async () => {
    const { file } = liveDatabase(3);
    for (const suffix of ['', '-wal', '-shm', '-journal']) {
      await expect(backupSqliteDatabase({ source: file, target: file + suffix, overwrite: true })).rejects.toBeInstanceOf(BackupTargetIsLiveDatabaseError);
    }
    expect(statSync(file).size).toBeGreaterThan(0);
  });

  it('says so when the target directory does not exist', async () => {
    const { directory, file } = liveDatabase(1);
    await expect(backupSqliteDatabase({ source: file, target: join(directory, 'missing', 'backup.sqlite'), overwrite: false })).rejects.toBeInstanceOf(BackupDirectoryMissingError);
  });

  it('asks for the database and its log plus 10 %, and at least 64 MiB, of free space', () => {
    const MIB = 1024 * 1024;
    expect(spaceNeededForCopy(0)).toBe(64 * MIB);
    expect(spaceNeededForCopy(100 * MIB)).toBe(164 * MIB);
    expect(spaceNeededForCopy(10_000 * MIB)).toBe(11_000 * MIB);
  });

  it("refuses a copy that the target's file system has no room for, before writing anything", async () => {
    const { directory, file } = liveDatabase(3);
    const { bavail, bsize } = statfsSync(directory);
    const freeBytes = bavail * bsize;
    // The write-ahead log, grown (sparse, taking no space) past what the file system has free.
    truncateSync(`${file}-wal`, freeBytes + 1024 ** 3);
    const refused = await backupSqliteDatabase({ source: file, target: join(directory, 'backup.sqlite'), overwrite: false }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BackupSpaceInsufficientError);
    expect((refused as BackupSpaceInsufficientError).neededBytes).toBeGreaterThan(freeBytes + 1024 ** 3);
    expect((refused as BackupSpaceInsufficientError).availableBytes).toBeLessThan((refused as BackupSpaceInsufficientError).neededBytes);
    expect(readdirSync(directory).filter((name) => !name.startsWith('tms.sqlite'))).toEqual([]);
  });

  it('stops the copy thread when asked, and answers once it has ended and let go of the live database', async () => {
    const { directory, file, live } = liveDatabase(20_000);
    const already = new AbortController();
    already.abort();
    await expect(backupSqliteDatabaseOffThread({ source: file, target: join(directory, 'never.sqlite'), overwrite: false }, already.signal)).rejects.toBeInstanceOf(BackupAbortedError);

    const stop = new AbortController();
    const copying = backupSqliteDatabaseOffThread({ source: file, target: join(directory, 'stopped.sqlite'), overwrite: false }, stop.signal);
    stop.abort();
    await expect(copying).rejects.toBeInstanceOf(BackupAbortedError);
    expect(readdirSync(directory)).not.toContain('stopped.sqlite');
    // No reader of the stopped thread holds the log: a checkpoint can restart it.
    expect(live.pragma('wal_checkpoint(TRUNCATE)')).toEqual([expect.objectContaining({ busy: 0 })]);
  });

  it('leaves nothing behind when the copy cannot be finished', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tms-backup-'));
    directories.push(directory);
    const file = join(directory, 'tms.sqlite');
    const live = openSqliteDatabase(file);
    connections.push(live);
    live.exec('CREATE TABLE other (id INTEGER)'); // no messages table: counting fails
    await expect(backupSqliteDatabase({ source: file, target: join(directory, 'backup.sqlite'), overwrite: false })).rejects.toThrow(/messages/);
    expect(readdirSync(directory).sort()).toEqual(['tms.sqlite']);
  });
});
