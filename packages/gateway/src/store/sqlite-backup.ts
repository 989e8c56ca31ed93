/**
 * A consistent copy of the embedded SQLite database, taken while the service keeps running, with
 * SQLite's online backup API (better-sqlite3's `backup`).
 *
 * The copy reads one snapshot. SQLite restarts a stepwise backup whenever it starts a new read
 * transaction on a database another connection changed meanwhile, so under the service's constant
 * writes a backup in steps, each with its own read transaction, may never finish. So the source
 * connection opens one read transaction first and holds it across every step: each step then reads
 * the same snapshot, and nothing restarts. In WAL mode a reader does not hold writers back, they
 * keep appending to the log. What the long reader does delay is the service's WAL checkpoints: the
 * log cannot restart while the copy runs, so it grows meanwhile, and each checkpoint round waits
 * briefly for the reader (see wal-checkpoints.ts). Both end with the copy.
 *
 * Before anything is written, the target's file system must have room for the database and its
 * log plus a margin: a copy that filled the disk of the live database would stop the service.
 *
 * The copy is made in a hidden file beside the target, created with mode 0600 before anything is
 * written to it (it holds secrets' ciphertexts and personal data), synced, and only then given the
 * target's name: an interrupted backup never leaves a truncated file under the name asked for.
 *
 * The steps hold their thread for as long as the copy takes, so they run on a thread of their own
 * (sqlite-backup-thread.ts): on a serving process's event loop they would stall every request.
 * The thread yields between steps (a few MiB each), so it can be stopped there: a download whose
 * client went away stops copying within a step rather than finishing a copy nobody will read.
 */
import { closeSync, constants, fsyncSync, linkSync, openSync, renameSync, rmSync, statfsSync, statSync, chmodSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { spawnModuleThread } from '../lib/module-thread.ts';
import { openSqliteDatabase, type SqliteConnection } from './sqlite-driver.ts';

/** Pages per backup step (4 MiB at SQLite's default page size): how far a copy goes before it can be stopped. */
const PAGES_PER_STEP = 1024;

/** Free space a copy needs beyond the database and its log: this share of them, and at least MIN_SPACE_MARGIN_BYTES. */
const SPACE_MARGIN_SHARE = 0.1;
const MIN_SPACE_MARGIN_BYTES = 64 * 1024 * 1024;

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

export class BackupSpaceInsufficientError extends Error {
  constructor(
    readonly directory: string,
    readonly neededBytes: number,
    readonly availableBytes: number,
  ) {
    super(`the file system of ${directory} has ${availableBytes} bytes free; a copy needs ${neededBytes}`);
  }
}

/** The copy was stopped before it was finished (the caller asked: its client went away, or the process is stopping). */
export class BackupAbortedError extends Error {
  constructor(readonly target: string) {
    super(`the backup to ${target} was stopped before it was finished`);
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

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * The free space a copy of a database of `databaseBytes` (its file and its -wal together: the
 * copy holds every page the log adds) must find: that, plus a margin for the copy's own journal
 * and for the writes the service makes meanwhile.
 */
export function spaceNeededForCopy(databaseBytes: number): number {
  return databaseBytes + Math.max(Math.ceil(databaseBytes * SPACE_MARGIN_SHARE), MIN_SPACE_MARGIN_BYTES);
}

/** Refuses a copy of `source` into `directory` whose file system has not room enough for it. */
function requireSpaceForCopy(source: string, directory: string): void {
  const neededBytes = spaceNeededForCopy(sizeOf(source) + sizeOf(`${source}-wal`));
  const { bavail, bsize } = statfsSync(directory);
  // Blocks free to an unprivileged writer: the service should not eat into root's reserve either.
  const availableBytes = bavail * bsize;
  if (availableBytes < neededBytes) throw new BackupSpaceInsufficientError(directory, neededBytes, availableBytes);
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
  requireSpaceForCopy(source, directory);

  const partial = join(directory, `.${basename(target)}.partial-${process.pid}-${Date.now()}`);
  // Created empty with its final mode before SQLite writes a byte into it; SQLite gives its journal the same mode.
  closeSync(openSync(partial, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, BACKUP_FILE_MODE));
  const live = openSqliteDatabase(source, { readonly: true, fileMustExist: true });
  try {
    live.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // One read transaction for every step: one snapshot, never restarted by the service's commits.
    live.exec('BEGIN');
    live.prepare('SELECT count(*) FROM sqlite_master').get();
    const progress = await live.backup(partial, { progress: () => PAGES_PER_STEP });
    live.exec('COMMIT');
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
  | { kind: 'space_insufficient'; directory: string; neededBytes: number; availableBytes: number }
  | { kind: 'other'; message: string };

export type FromBackupThread = { kind: 'done'; result: SqliteBackupResult } | { kind: 'failed'; failure: BackupFailure };

export function describeBackupFailure(error: unknown): BackupFailure {
  if (error instanceof BackupTargetExistsError) return { kind: 'target_exists', target: error.target };
  if (error instanceof BackupTargetIsLiveDatabaseError) return { kind: 'live_database', target: error.target };
  if (error instanceof BackupDirectoryMissingError) return { kind: 'directory_missing', directory: error.directory };
  if (error instanceof BackupSpaceInsufficientError) return { kind: 'space_insufficient', directory: error.directory, neededBytes: error.neededBytes, availableBytes: error.availableBytes };
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
    case 'space_insufficient':
      return new BackupSpaceInsufficientError(failure.directory, failure.neededBytes, failure.availableBytes);
    default:
      return new Error(failure.message);
  }
}

/**
 * backupSqliteDatabase on a thread of its own, so the caller's event loop goes on serving
 * meanwhile. When `signal` aborts before the thread answered, the thread is stopped (between two
 * steps of the copy) and this rejects with BackupAbortedError once it has ended and closed its
 * files. What it had written is then the caller's to remove: the hidden partial file beside the
 * target, or the target itself if the copy was finished just then.
 */
export function backupSqliteDatabaseOffThread(request: SqliteBackupRequest, signal?: AbortSignal): Promise<SqliteBackupResult> {
  return new Promise((resolvePromise, reject) => {
    if (signal?.aborted) {
      reject(new BackupAbortedError(request.target));
      return;
    }
    const thread = spawnModuleThread(import.meta.url, 'sqlite-backup-thread', request);
    let answered = false;
    const answer = (settle: () => void): void => {
      if (answered) return;
      answered = true;
      signal?.removeEventListener('abort', stop);
      settle();
    };
    function stop(): void {
      answer(() => {
        const aborted = (): void => reject(new BackupAbortedError(request.target));
        void thread.terminate().then(aborted, aborted);
      });
    }
    signal?.addEventListener('abort', stop, { once: true });
    thread.once('message', (message: FromBackupThread) => answer(() => (message.kind === 'done' ? resolvePromise(message.result) : reject(errorOf(message.failure)))));
    thread.once('error', (error) => answer(() => reject(error)));
    thread.once('exit', (code) => answer(() => reject(new Error(`the backup thread ended (exit code ${code}) without finishing the copy`))));
  });
}
