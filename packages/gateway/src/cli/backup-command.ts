/** `tms admin backup FILE [--force]`: the embedded database, copied while the service runs. */
import { backupDatabase } from '../services/admin/database-backup.ts';
import type { Context, OperatorCaller } from '../services/context.ts';
import { badRequest } from '../services/errors.ts';

export interface BackupReport {
  file: string;
  bytes: number;
  messages: number;
  started_at: string;
  duration_ms: number;
}

/** Runs the backup for `tms admin backup`; `file` is the word after `backup`. */
export async function runBackupCommand(ctx: Context<OperatorCaller>, file: string | undefined, force: boolean): Promise<BackupReport> {
  if (file === undefined || file === '') throw badRequest('FILE is required: tms admin backup FILE [--force]');
  const backup = await backupDatabase({ ctx, input: { file, overwrite: force } });
  return {
    file: backup.file,
    bytes: backup.bytes,
    messages: backup.messages,
    started_at: new Date(backup.startedAt).toISOString(),
    duration_ms: backup.durationMs,
  };
}
