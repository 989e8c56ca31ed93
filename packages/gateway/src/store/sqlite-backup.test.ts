import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BackupDirectoryMissingError, BackupTargetExistsError, BackupTargetIsLiveDatabaseError, backupSqliteDatabase } from './sqlite-backup.ts';
import { openSqliteDatabase, type SqliteConnection } from './sqlite-driver.ts';

describe('backupSqliteDatabase', () => {
  const directories: string[] = [];
  const connections: SqliteConnection[] = [];
  afterEach(() => {
    for (const connection of connections.splice(0)) connection.close();
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  /** A live WAL database with a messages table, held open like the service holds it. */
  function liveDatabase(messages: number): { directory: string; file: string; live: SqliteConnection } {
    const directory = mkdtempSync(join(tmpdir(), 'tms-backup-'));
    directories.push(directory);
    const file = join(directory, 'tms.sqlite');
    const live = openSqliteDatabase(file);
    connections.push(live);
    live.pragma('journal_mode = WAL');
    live.exec('CREATE TABLE messages (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
    const insert = live.prepare('INSERT INTO messages (id, body) VALUES (?, ?)');
    live.transaction(() => {
      for (let index = 0; index < messages; index += 1) insert.run(`msg_${index}`, 'x'.repeat(100));
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

  it('holds one snapshot while another connection keeps committing', async () => {
    const { directory, file } = liveDatabase(20_000);
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
