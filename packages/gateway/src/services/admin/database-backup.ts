/**
 * The operator's online backup of the embedded database (`tms admin backup FILE`).
 *
 * Only the command line offers it, not /admin/v1: the copy is a file on the server's own disk, so
 * an HTTP verb would let whoever holds the operator token write a file holding every customer's
 * data wherever the service may write, and on PostgreSQL, or behind a load balancer, the process
 * that answers is not the one beside the data. The operator who can run `tms admin` on the machine
 * already has the data directory.
 */
import {
  BackupDirectoryMissingError,
  BackupTargetExistsError,
  BackupTargetIsLiveDatabaseError,
  backupSqliteDatabase,
  type SqliteBackupResult,
} from '../../store/sqlite-backup.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
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

const POSTGRES_REFUSAL =
  '`tms admin backup` copies the embedded SQLite database; this installation uses PostgreSQL (DATABASE_URL). ' +
  'Back PostgreSQL up with its own tools: `pg_dump` for a logical copy, or base backups (`pg_basebackup`) with WAL ' +
  'archiving for point-in-time recovery (see docs/operations.md, Backups).';

/** Copies the embedded database to `file` while the service keeps running. */
export async function backupDatabase({ ctx, input }: VerbCall<OperatorCaller, DatabaseBackupInput>): Promise<DatabaseBackup> {
  const { database } = ctx.parts.config;
  if (database.kind !== 'sqlite') throw badRequest(POSTGRES_REFUSAL);
  if (input.file.trim() === '') throw badRequest('FILE is required: where to write the backup');
  const startedAt = ctx.clock();
  try {
    const result = await backupSqliteDatabase({ source: database.file, target: input.file, overwrite: input.overwrite });
    const durationMs = ctx.clock() - startedAt;
    ctx.log.info({ file: result.file, bytes: result.bytes, messages: result.messages, duration_ms: durationMs }, 'database backup written');
    return { ...result, startedAt, durationMs };
  } catch (error) {
    if (error instanceof BackupTargetExistsError) throw badRequest(`${error.target} already exists; pass --force to replace it`);
    if (error instanceof BackupTargetIsLiveDatabaseError) throw badRequest(`${error.target} is the live database (or one of its -wal, -shm or -journal files); write the backup elsewhere`);
    if (error instanceof BackupDirectoryMissingError) throw badRequest(`cannot write the backup: ${error.directory} does not exist`);
    throw error;
  }
}
