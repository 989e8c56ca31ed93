/**
 * A consistent copy of the embedded SQLite database, taken while the service keeps running, with
 * SQLite's online backup API (better-sqlite3's `backup`).
 *
 * All pages are copied in one backup step, that is inside one read transaction. SQLite restarts a
 * stepwise backup whenever another connection commits between two steps, so under the service's
 * constant writes a backup in small steps may never finish. A single step reads one snapshot; in
 * WAL mode a reader does not hold writers back, they keep appending to the log. What the long
 * reader does delay is the service's WAL checkpoints: the log cannot restart while the copy runs,
 * so it grows meanwhile, and each checkpoint round waits briefly for the reader (see
 * wal-checkpoints.ts). Both end with the copy.
 *
 * The copy is made in a hidden file beside the target, created with mode 0600 before anything is
 * written to it (it holds secrets' ciphertexts and personal data), synced, and only then given the
 * target's name: an interrupted backup never leaves a truncated file under the name asked for.
 *
 * That one step holds its thread until the copy is done, so it runs on a thread of its own
 * (sqlite-backup-thread.ts): on a serving process's event loop it would stall every request for
 * as long as the copy takes.
 */
import { closeSync, constants, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync, chmodSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { spawnModuleThread } from '../lib/module-thread.ts';
import { openSqliteDatabase, type SqliteConnection } from './sqlite-driver.ts';

/** Pages per backup step: everything at once (better-sqlite3 caps a step at 2^31 - 1 pages). */
const ALL_REMAINING_PAGES = 0x7fffffff;

/** How long the backup's reader waits for a lock (a checkpoint restarting the log holds one briefly). */
const BUSY_TIMEOUT_MS = 10_000;

const BACKUP_FILE_MODE = 0o600;

/** The files SQLite keeps beside a database: copying over one of them would corrupt the live store. */
const DATABASE_COMPANION_SUFFIXES = ['', '-wal', '-shm', '-journal'];

export class BackupTargetExistsError extends Error {
  constructor(readonly target: string) {
    super(`${target} already exists`);
  }
}

export class BackupTargetIsLiveDatabaseError extends Error {
  constructor(readonly target: string) {
    super(`${target} is the live database or one of its files`);
  }
}

export class BackupDirectoryMissingError extends Error {
  constructor(readonly directory: string) {
    super(`directory ${directory} does not exist`);
  }
}

export interface SqliteBackupRequest {
  /** The live database file. */
  source: string;
  /** Where the copy goes. */
  target: string;
  /** Replace an existing target; otherwise an existing target is refused. */
  overwrite: boolean;
}

export interface SqliteBackupResult {
  /** Absolute path of the copy. */
  file: string;
  bytes: number;
  /** Rows of the messages table in the copy. */
  messages: number;
  pages: number;
}

function sameFile(a: string, b: string): boolean {
  try {
    const first = statSync(a);
    const second = statSync(b);
    return first.dev === second.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}

function isLiveDatabaseFile(source: string, target: string): boolean {
  return DATABASE_COMPANION_SUFFIXES.some((suffix) => resolve(source + suffix) === target || sameFile(source + suffix, target));
}

function syncPath(path: string): void {
  const descriptor = openSync(path, constants.O_RDONLY);
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the copy a single self-contained file and counts its messages. The copy carries the live
 * database's WAL mode in its header; in rollback-journal mode it needs no -wal or -shm beside it
 * (a reader of a WAL database leaves those behind). The gateway puts it back in WAL mode when it
 * opens it after a restore.
 */
function finishCopy(file: string): number {
  const copy: SqliteConnection = openSqliteDatabase(file, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    const row = copy.prepare('SELECT count(*) AS count FROM messages').get() as { count: number };
    return row.count;
  } finally {
    copy.close();
  }
}

/** Puts the finished copy under the target's name: never over an existing file unless `overwrite`. */
function publish(partial: string, target: string, overwrite: boolean): void {
  if (overwrite) {
    renameSync(partial, target);
    return;
  }
  try {
    // link() fails when the name is taken, so a file that appeared meanwhile is not replaced.
    linkSync(partial, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupTargetExistsError(target);
    throw error;
  }
  rmSync(partial);
}

/** Copies the live database `source` to `target`, consistently, while other processes write to it (on the caller's thread). */
export async function backupSqliteDatabase(request: SqliteBackupRequest): Promise<SqliteBackupResult> {
  const source = resolve(request.source);
  const target = resolve(request.target);
  const directory = dirname(target);
  if (isLiveDatabaseFile(source, target)) throw new BackupTargetIsLiveDatabaseError(target);
  if (!exists(directory)) throw new BackupDirectoryMissingError(directory);
  if (!request.overwrite && exists(target)) throw new BackupTargetExistsError(target);

  const partial = join(directory, `.${basename(target)}.partial-${process.pid}-${Date.now()}`);
  // Created empty with its final mode before SQLite writes a byte into it; SQLite gives its journal the same mode.
  closeSync(openSync(partial, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, BACKUP_FILE_MODE));
  const live = openSqliteDatabase(source, { readonly: true, fileMustExist: true });
  try {
    live.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const progress = await live.backup(partial, { progress: () => ALL_REMAINING_PAGES });
    const messages = finishCopy(partial);
    chmodSync(partial, BACKUP_FILE_MODE);
    syncPath(partial);
    publish(partial, target, request.overwrite);
    syncPath(directory);
    return { file: target, bytes: statSync(target).size, messages, pages: progress.totalPages };
  } catch (error) {
    for (const suffix of DATABASE_COMPANION_SUFFIXES) rmSync(partial + suffix, { force: true });
    throw error;
  } finally {
    live.close();
  }
}

/** A failure of the backup thread as it crosses to the caller: errors lose their class on the way. */
export type BackupFailure =
  | { kind: 'target_exists'; target: string }
  | { kind: 'live_database'; target: string }
  | { kind: 'directory_missing'; directory: string }
  | { kind: 'other'; message: string };

export type FromBackupThread = { kind: 'done'; result: SqliteBackupResult } | { kind: 'failed'; failure: BackupFailure };

export function describeBackupFailure(error: unknown): BackupFailure {
  if (error instanceof BackupTargetExistsError) return { kind: 'target_exists', target: error.target };
  if (error instanceof BackupTargetIsLiveDatabaseError) return { kind: 'live_database', target: error.target };
  if (error instanceof BackupDirectoryMissingError) return { kind: 'directory_missing', directory: error.directory };
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}

function errorOf(failure: BackupFailure): Error {
  switch (failure.kind) {
    case 'target_exists':
      return new BackupTargetExistsError(failure.target);
    case 'live_database':
      return new BackupTargetIsLiveDatabaseError(failure.target);
    case 'directory_missing':
      return new BackupDirectoryMissingError(failure.directory);
    default:
      return new Error(failure.message);
  }
}

/** backupSqliteDatabase on a thread of its own, so the caller's event loop goes on serving meanwhile. */
export function backupSqliteDatabaseOffThread(request: SqliteBackupRequest): Promise<SqliteBackupResult> {
  return new Promise((resolvePromise, reject) => {
    const thread = spawnModuleThread(import.meta.url, 'sqlite-backup-thread', request);
    let answered = false;
    thread.once('message', (message: FromBackupThread) => {
      answered = true;
      if (message.kind === 'done') resolvePromise(message.result);
      else reject(errorOf(message.failure));
    });
    thread.once('error', (error) => {
      answered = true;
      reject(error);
    });
    thread.once('exit', (code) => {
      if (!answered) reject(new Error(`the backup thread ended (exit code ${code}) without finishing the copy`));
    });
  });
}
