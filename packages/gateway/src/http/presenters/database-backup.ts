import { formatUtc } from '../../lib/vietnam-time.ts';
import type { DatabaseBackupDownload } from '../../services/admin/database-backup.ts';

export const BACKUP_MEDIA_TYPE = 'application/vnd.sqlite3';

/** `tms-backup-20261125T020000Z.sqlite`: when the copy started, in UTC, sortable and safe in any file system. */
function backupFileName(startedAt: number): string {
  return `tms-backup-${formatUtc(startedAt).replace(/[-:]|\.\d{3}/g, '')}.sqlite`;
}

/** The headers of a backup download: what `tms admin backup` prints, for the file that follows. */
export function presentBackupDownloadHeaders(backup: Omit<DatabaseBackupDownload, 'content'>): Record<string, string> {
  return {
    'content-type': BACKUP_MEDIA_TYPE,
    'content-disposition': `attachment; filename="${backupFileName(backup.startedAt)}"`,
    'content-length': String(backup.bytes),
    'x-backup-messages': String(backup.messages),
    'x-backup-started-at': formatUtc(backup.startedAt),
  };
}
