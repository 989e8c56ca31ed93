/**
 * The operator's online backup of the embedded database: `tms admin backup FILE` writes it to a
 * file on the machine, GET /admin/v1/backup streams it to the caller.
 *
 * Over HTTP the caller never names a path on the server: a verb that wrote where it was told
 * would let whoever holds the operator token put a file holding every customer's data anywhere
 * the service may write. The copy is taken into a private temporary directory inside the data
 * directory (0700, the file 0600), opened, and its name removed before a byte is sent: the open
 * descriptor keeps it readable for the download, and nothing is left on disk whether the
 * download finishes, the client goes away, or the process dies meanwhile. The copy is complete
 * before it is sent, so a slow client holds no snapshot. The token already reads and changes every
 * workspace; a backup adds the ciphertexts of stored secrets, which need the master key, which the
 * token does not give. Each backup is audited. On PostgreSQL the data is beside none of our
 * processes: it is backed up with PostgreSQL's own tools, and both ways refuse, saying so. */
import { createReadStream, mkdtempSync, openSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import {
  BackupDirectoryMissingError,
  BackupTargetExistsError,
  BackupTargetIsLiveDatabaseError,
  backupSqliteDatabaseOffThread,
  type SqliteBackupResult,
} from '../../store/sqlite-backup.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { badRequest } from '../errors.ts';

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

/** A backup to send to the caller: `content` reads the copy, whose file no longer has a name. */
export interface DatabaseBackupDownload extends Omit<DatabaseBackup, 'file'> {
  readonly content: Readable;
}

const POSTGRES_REFUSAL =
  'A backup (`tms admin backup`, GET /admin/v1/backup) copies the embedded SQLite database; this installation uses PostgreSQL (DATABASE_URL). ' +
  'Back PostgreSQL up with its own tools: `pg_dump` for a logical copy, or base backups (`pg_basebackup`) with WAL ' +
  'archiving for point-in-time recovery (see docs/operations.md, Backups).';

/** The prefix of the private directories downloads are copied into, inside the data directory. */
export const DOWNLOAD_DIRECTORY_PREFIX = '.backup-download-';

/** The embedded database's file; PostgreSQL is refused. */
function requireEmbeddedDatabase(ctx: Context): string {
  const { database } = ctx.parts.config;
  if (database.kind !== 'sqlite') throw badRequest(POSTGRES_REFUSAL);
  return database.file;
}

/** Takes the copy, logs and audits it; `destination` says in the audit log where it went. */
async function takeBackup(ctx: Context<OperatorCaller>, request: { source: string; target: string; overwrite: boolean }, destination: Record<string, unknown>): Promise<DatabaseBackup> {
  const startedAt = ctx.clock();
  let result: SqliteBackupResult;
  try {
    result = await backupSqliteDatabaseOffThread(request);
  } catch (error) {
    if (error instanceof BackupTargetExistsError) throw badRequest(`${error.target} already exists; pass --force to replace it`);
    if (error instanceof BackupTargetIsLiveDatabaseError) throw badRequest(`${error.target} is the live database (or one of its -wal, -shm or -journal files); write the backup elsewhere`);
    if (error instanceof BackupDirectoryMissingError) throw badRequest(`cannot write the backup: ${error.directory} does not exist`);
    throw error;
  }
  const durationMs = ctx.clock() - startedAt;
  ctx.log.info({ ...destination, bytes: result.bytes, messages: result.messages, duration_ms: durationMs }, 'database backup taken');
  await recordAudit(ctx, {
    action: 'database.backup',
    workspaceId: null,
    target: null,
    before: null,
    after: { ...destination, messages: result.messages, bytes: result.bytes, started_at: new Date(startedAt).toISOString() },
  });
  return { ...result, startedAt, durationMs };
}

/** Copies the embedded database to `file` while the service keeps running. */
export async function backupDatabase({ ctx, input }: VerbCall<OperatorCaller, DatabaseBackupInput>): Promise<DatabaseBackup> {
  const source = requireEmbeddedDatabase(ctx);
  if (input.file.trim() === '') throw badRequest('FILE is required: where to write the backup');
  return takeBackup(ctx, { source, target: input.file, overwrite: input.overwrite }, { destination: 'file', file: resolve(input.file) });
}

/** Copies the embedded database for the caller to download, while the service keeps running. */
export async function downloadDatabaseBackup({ ctx }: VerbCall<OperatorCaller, Record<string, never>>): Promise<DatabaseBackupDownload> {
  const source = requireEmbeddedDatabase(ctx);
  const directory = mkdtempSync(join(ctx.parts.config.dataDir, DOWNLOAD_DIRECTORY_PREFIX));
  try {
    const { file, ...backup } = await takeBackup(ctx, { source, target: join(directory, 'tms-backup.sqlite'), overwrite: false }, { destination: 'download' });
    return { ...backup, content: createReadStream(file, { fd: openSync(file, 'r') }) };
  } finally {
    // Once open, the copy needs no name: removing it now leaves nothing behind, however the download ends.
    rmSync(directory, { recursive: true, force: true });
  }
}
