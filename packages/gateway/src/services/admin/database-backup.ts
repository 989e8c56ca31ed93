/**
 * The operator's online backup of the embedded database: `tms admin backup FILE` writes it to a
 * file on the machine, GET /admin/v1/backup streams it to the caller.
 *
 * Over HTTP the caller never names a path on the server: a verb that wrote where it was told
 * would let whoever holds the operator token put a file holding every customer's data anywhere
 * the service may write. The copy is taken into a private temporary directory inside the data
 * directory (0700, the file 0600), opened, and its name removed before a byte is sent: the open
 * descriptor keeps it readable for the download. A caller that goes away during the copy stops it,
 * as does the process closing: the copy's thread is stopped and the directory removed. A process
 * killed or crashed during the copy leaves the directory behind; `tms start` and `tms api` remove
 * such leftovers when they start (removeAbandonedBackupDownloads). The copy is complete before it is sent, so a slow client
 * holds no snapshot, but its disk space stays taken until the client has read it or gone.
 *
 * One backup at a time per process (BackupSlot), each only once its target's file system has room
 * for it (store/sqlite-backup.ts): a copy must never fill the disk of the live database. The token
 * already reads and changes every workspace; a backup adds the ciphertexts of stored secrets,
 * which need the master key, which the token does not give. Each backup is audited: a file once
 * written, a download once it ended, saying whether the whole file was sent. On PostgreSQL the
 * data is beside none of our processes: it is backed up with PostgreSQL's own tools, and both ways
 * refuse, saying so.
 */
import { closeSync, createReadStream, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { BackupTurn } from '../../infrastructure/backup-slot.ts';
import {
  BackupAbortedError,
  BackupDirectoryMissingError,
  BackupSpaceInsufficientError,
  BackupTargetExistsError,
  BackupTargetIsLiveDatabaseError,
  backupSqliteDatabaseOffThread,
  type SqliteBackupRequest,
  type SqliteBackupResult,
} from '../../store/sqlite-backup.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';

export interface DatabaseBackupInput {
  /** Where to write the copy (relative to the current directory). */
  file: string;
  /** Replace an existing file. */
  overwrite: boolean;
}

export interface DatabaseBackup extends SqliteBackupResult {
  /** When the copy was started: it holds every commit made before then. */
  startedAt: number;
  durationMs: number;
}

export interface DatabaseBackupDownloadInput {
  /** Aborts when the caller has gone away: a copy still being made is stopped and removed. */
  readonly abandoned: AbortSignal;
}

/** A backup to send to the caller: `content` reads the copy, whose file no longer has a name. */
export interface DatabaseBackupDownload extends Omit<DatabaseBackup, 'file'> {
  readonly content: Readable;
  /**
   * To call once the answer has ended, `completed` when all of it was sent: closes the copy (its
   * disk space is freed then), lets the next backup begin, and audits the download. Only the first
   * call counts; it never rejects (a failure is logged).
   */
  finish(completed: boolean): Promise<void>;
}

const POSTGRES_REFUSAL =
  'A backup (`tms admin backup`, GET /admin/v1/backup) copies the embedded SQLite database; this installation uses PostgreSQL (DATABASE_URL). ' +
  'Back PostgreSQL up with its own tools: `pg_dump` for a logical copy, or base backups (`pg_basebackup`) with WAL ' +
  'archiving for point-in-time recovery (see docs/operations.md, Backups).';

/** The prefix of the private directories downloads are copied into, inside the data directory. */
export const DOWNLOAD_DIRECTORY_PREFIX = '.backup-download-';

/** What a second backup is told to wait: copies of a large store take minutes, so no sooner than this. */
export const BACKUP_BUSY_RETRY_AFTER_SECONDS = 60;

/** The embedded database's file; PostgreSQL is refused. */
function requireEmbeddedDatabase(ctx: Context): string {
  const { database } = ctx.parts.config;
  if (database.kind !== 'sqlite') throw badRequest(POSTGRES_REFUSAL);
  return database.file;
}

/** The process's one backup slot, or a refusal to retry later while another backup holds it. */
function takeBackupTurn(ctx: Context<OperatorCaller>): BackupTurn {
  const turn = ctx.parts.backups.take();
  if (turn) return turn;
  throw new ApiError(
    'service_unavailable',
    'another backup is being taken by this process (a download holds its copy until it has been read): backups run one at a time, so that two copies never fill the disk together. Try again once it has finished.',
    { 'Retry-After': String(BACKUP_BUSY_RETRY_AFTER_SECONDS) },
  );
}

const MIB = 1024 * 1024;

/** The operator's words for a copy the store refused to make; anything else as it is. */
function refusalOf(error: unknown): unknown {
  if (error instanceof BackupTargetExistsError) return badRequest(`${error.target} already exists; pass --force to replace it`);
  if (error instanceof BackupTargetIsLiveDatabaseError) return badRequest(`${error.target} is the live database (or one of its -wal, -shm or -journal files); write the backup elsewhere`);
  if (error instanceof BackupDirectoryMissingError) return badRequest(`cannot write the backup: ${error.directory} does not exist`);
  if (error instanceof BackupSpaceInsufficientError) {
    return new ApiError(
      'insufficient_disk_space',
      `not enough free space for a backup in ${error.directory}: its file system has ${Math.floor(error.availableBytes / MIB)} MiB free, and a copy of the database ` +
        `(with its write-ahead log) and a margin need ${Math.ceil(error.neededBytes / MIB)} MiB. Nothing was written. Free space there, or write the backup file to another file system.`,
    );
  }
  return error;
}

/** Copies the database off the event loop, timed; refusals become the operator's errors. */
async function copyDatabase(ctx: Context<OperatorCaller>, request: SqliteBackupRequest, signal?: AbortSignal): Promise<DatabaseBackup> {
  const startedAt = ctx.clock();
  try {
    const result = await backupSqliteDatabaseOffThread(request, signal);
    return { ...result, startedAt, durationMs: ctx.clock() - startedAt };
  } catch (error) {
    throw refusalOf(error);
  }
}

function auditBackup(ctx: Context<OperatorCaller>, after: Record<string, unknown>): Promise<void> {
  return recordAudit(ctx, { action: 'database.backup', workspaceId: null, target: null, before: null, after });
}

/** Copies the embedded database to `file` while the service keeps running. */
export async function backupDatabase({ ctx, input }: VerbCall<OperatorCaller, DatabaseBackupInput>): Promise<DatabaseBackup> {
  const source = requireEmbeddedDatabase(ctx);
  if (input.file.trim() === '') throw badRequest('FILE is required: where to write the backup');
  const turn = takeBackupTurn(ctx);
  try {
    const backup = await copyDatabase(ctx, { source, target: input.file, overwrite: input.overwrite });
    const file = resolve(input.file);
    ctx.log.info({ destination: 'file', file, bytes: backup.bytes, messages: backup.messages, duration_ms: backup.durationMs }, 'database backup taken');
    await auditBackup(ctx, { destination: 'file', file, messages: backup.messages, bytes: backup.bytes, started_at: new Date(backup.startedAt).toISOString() });
    return backup;
  } finally {
    turn.release();
  }
}

/**
 * The audit entry of a download, written once it has ended: `completed` only when the whole file
 * was sent; `messages` and `bytes` are null when the copy itself was not finished (then
 * `started_at` is when the download was asked for).
 */
function auditDownload(ctx: Context<OperatorCaller>, askedAt: number, copy: DatabaseBackup | null, completed: boolean): Promise<void> {
  const startedAt = new Date(copy?.startedAt ?? askedAt).toISOString();
  return auditBackup(ctx, { destination: 'download', completed, messages: copy?.messages ?? null, bytes: copy?.bytes ?? null, started_at: startedAt });
}

/** Closes the stream's descriptor (if the answer did not) and waits until it is closed. */
function closeContent(content: Readable): Promise<void> {
  content.destroy();
  return content.closed ? Promise.resolve() : new Promise((resolveClosed) => content.once('close', () => resolveClosed()));
}

/** Copies the embedded database for the caller to download, while the service keeps running. */
export async function downloadDatabaseBackup({ ctx, input }: VerbCall<OperatorCaller, DatabaseBackupDownloadInput>): Promise<DatabaseBackupDownload> {
  const source = requireEmbeddedDatabase(ctx);
  const turn = takeBackupTurn(ctx);
  // The caller going away, or this process closing, stops the copy.
  const stopped = AbortSignal.any([input.abandoned, turn.signal]);
  const askedAt = ctx.clock();
  let directory: string | null = null;
  let copy: DatabaseBackup | null = null;
  try {
    directory = mkdtempSync(join(ctx.parts.config.dataDir, DOWNLOAD_DIRECTORY_PREFIX));
    copy = await copyDatabase(ctx, { source, target: join(directory, 'tms-backup.sqlite'), overwrite: false }, stopped);
    const descriptor = openSync(copy.file, 'r');
    // Once open, the copy needs no name: removed now, nothing is left on disk once it is closed.
    rmSync(directory, { recursive: true, force: true });
    directory = null;
    if (stopped.aborted) {
      closeSync(descriptor);
      throw new BackupAbortedError(copy.file);
    }
    ctx.log.info({ destination: 'download', bytes: copy.bytes, messages: copy.messages, duration_ms: copy.durationMs }, 'database backup taken');
    const taken = copy;
    const { file, ...backup } = taken;
    const content = createReadStream(file, { fd: descriptor });
    let finishing: Promise<void> | null = null;
    const finish = (completed: boolean): Promise<void> =>
      (finishing ??= (async () => {
        await closeContent(content);
        turn.release();
        ctx.log.info({ destination: 'download', completed, bytes: backup.bytes }, completed ? 'database backup download sent' : 'database backup download cut off: the client went away');
        await auditDownload(ctx, askedAt, taken, completed);
      })().catch((error: unknown) => ctx.log.error({ err: error }, 'could not finish a backup download')));
    return { ...backup, content, finish };
  } catch (error) {
    if (directory) rmSync(directory, { recursive: true, force: true });
    turn.release();
    if (!(error instanceof BackupAbortedError)) throw error;
    ctx.log.warn({ destination: 'download', copy_finished: copy !== null }, 'database backup download abandoned during the copy: the copy was stopped and removed');
    await auditDownload(ctx, askedAt, copy, false);
    throw new ApiError('service_unavailable', 'the backup was abandoned before it was sent (the client went away, or the service is stopping): the copy was stopped and removed');
  }
}

/**
 * Removes the download copies left in the data directory by a process stopped or killed while it
 * was copying one (each holds every customer's data). Run by a serving process as it starts,
 * before it takes requests: every such directory is then older than the process. Answers the
 * names of those removed. A failure is logged, never fatal: the service starts all the same.
 */
export function removeAbandonedBackupDownloads({ ctx }: VerbCall<OperatorCaller, object>): string[] {
  const { dataDir } = ctx.parts.config;
  const removed: string[] = [];
  try {
    const leftovers = readdirSync(dataDir, { withFileTypes: true }).filter((entry) => entry.isDirectory() && entry.name.startsWith(DOWNLOAD_DIRECTORY_PREFIX));
    for (const { name } of leftovers) {
      rmSync(join(dataDir, name), { recursive: true, force: true });
      removed.push(name);
    }
  } catch (error) {
    // A process on PostgreSQL may have no data directory at all.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') ctx.log.error({ err: error, data_dir: dataDir }, 'could not remove the backup download copies left in the data directory');
  }
  if (removed.length > 0) ctx.log.warn({ data_dir: dataDir, directories: removed }, 'removed backup download copies left by a process stopped during a download');
  return removed;
}
