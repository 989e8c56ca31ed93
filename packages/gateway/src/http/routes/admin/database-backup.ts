import { Transform } from 'node:stream';
import { downloadDatabaseBackup, type DatabaseBackupDownload } from '../../../services/admin/database-backup.ts';
import { BACKUP_MEDIA_TYPE, presentBackupDownloadHeaders } from '../../presenters/database-backup.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { OPERATOR_ERRORS } from '../../openapi/common-errors.ts';

/**
 * The copy as the answer's body, with its last chunk held back until the download's audit entry
 * is written: a client knows the file is whole from Content-Length, so an operator who reads the
 * audit log as soon as the download has ended finds the entry there. The file has then been
 * handed to the connection whole, so the entry says completed.
 */
function auditedBeforeTheEnd(download: DatabaseBackupDownload): Transform {
  let held: Buffer | null = null;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const previous = held;
      held = chunk;
      done(null, previous ?? undefined);
    },
    flush(done) {
      void download.finish(true).finally(() => done(null, held ?? undefined));
    },
  });
  download.content.once('error', (error) => body.destroy(error));
  return download.content.pipe(body);
}

/** GET /admin/v1/backup: the embedded database, copied while the service runs, as the answer's body. */
export function registerAdminDatabaseBackup(app: App, route: RouteDependencies): void {
  app.get(
    '/admin/v1/backup',
    {
      // A HEAD would take a whole copy only to throw it away.
      exposeHeadRoute: false,
      schema: {
        tags: ['Operations'],
        operationId: 'downloadBackup',
        summary: 'Download a consistent copy of the embedded SQLite database',
        description:
          "SQLite only: the same online backup as `tms admin backup FILE`, taken while the service goes on accepting sends, and streamed as the answer. It holds every commit made before it started, so every message answered 202 before this request arrived. The copy is made in a private temporary file in the data directory, whose name is removed before the first byte is sent; its disk space is freed once the download has ended. It is refused (503 `insufficient_disk_space`) unless the data directory's file system has room for the database and its write-ahead log plus a margin (10 %, at least 64 MiB). A process takes one backup at a time: another request meanwhile answers 503 `service_unavailable` with `Retry-After`. A client that goes away during the copy stops it, as does stopping the service, and the copy is removed; a process killed or crashed during a copy leaves a hidden `.backup-download-…` directory, which `tms start` and `tms api` remove when they start. Save the file somewhere as private as the data directory: it holds personal data and the ciphertexts of every stored secret, which the master key the backup was taken with opens (restore: see docs/operations.md). Each download is in the audit log once it has ended, with `completed` saying whether the whole file was sent. On PostgreSQL it is refused (400): use `pg_dump`, or base backups with WAL archiving.",
        'x-responses': {
          200: {
            description: 'The database file (one self-contained SQLite file, no -wal or -shm).',
            mediaType: BACKUP_MEDIA_TYPE,
            schema: { type: 'string', contentMediaType: BACKUP_MEDIA_TYPE },
            headers: {
              'Content-Disposition': { description: 'attachment, with a file name saying when the copy started (UTC).', schema: { type: 'string' }, example: 'attachment; filename="tms-backup-20261125T020000Z.sqlite"' },
              'Content-Length': { description: 'The size of the file in bytes.', schema: { type: 'integer' }, example: 52_428_800 },
              'X-Backup-Messages': { description: 'Rows of the messages table in the copy.', schema: { type: 'integer' }, example: 120_457 },
              'X-Backup-Started-At': { description: 'When the copy started: it holds every commit made before then.', schema: { type: 'string', format: 'date-time' }, example: '2026-11-25T02:00:00.000Z' },
            },
            examples: { backup: { summary: 'A SQLite database file', value: 'SQLite format 3 (binary)' } },
          },
        },
        'x-error-types': ['invalid_request', 'insufficient_disk_space', ...OPERATOR_ERRORS],
        'x-error-messages': {
          insufficient_disk_space:
            'not enough free space for a backup in /var/lib/tms/.backup-download-Xk3p9Q: its file system has 812 MiB free, and a copy of the database (with its write-ahead log) and a margin need 5734 MiB. Nothing was written. Free space there, or write the backup file to another file system.',
          service_unavailable:
            'another backup is being taken by this process (a download holds its copy until it has been read): backups run one at a time, so that two copies never fill the disk together. Try again once it has finished.',
          invalid_request: 'A backup copies the embedded SQLite database; this installation uses PostgreSQL (DATABASE_URL). Back PostgreSQL up with its own tools: `pg_dump`, or base backups with WAL archiving.' },
      },
    },
    async (request, reply) => {
      const clientGone = new AbortController();
      let download: DatabaseBackupDownload | null = null;
      // The connection closes when the answer has been sent, or when the client went away first:
      // during the copy that stops it; afterwards the download ends, complete only if all was sent.
      reply.raw.once('close', () => {
        if (download) void download.finish(reply.raw.writableFinished);
        else clientGone.abort();
      });
      download = await downloadDatabaseBackup({ ctx: operatorContextOf(request, route), input: { abandoned: clientGone.signal } });
      return reply.headers(presentBackupDownloadHeaders(download)).send(auditedBeforeTheEnd(download));
    },
  );
}
