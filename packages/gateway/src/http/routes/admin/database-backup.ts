import { downloadDatabaseBackup } from '../../../services/admin/database-backup.ts';
import { BACKUP_MEDIA_TYPE, presentBackupDownloadHeaders } from '../../presenters/database-backup.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { OPERATOR_ERRORS } from '../../openapi/common-errors.ts';

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
          "SQLite only: the same online backup as `tms admin backup FILE`, taken while the service goes on accepting sends, and streamed as the answer. It holds every commit made before it started, so every message answered 202 before this request arrived. The copy is made in a private temporary file in the data directory (it needs as much free space as the database), which is removed before the first byte is sent: nothing stays on the server's disk, however the download ends (only a crash during the copy itself may leave a hidden `.backup-download-…` directory there). Save it somewhere as private as the data directory: it holds personal data and the ciphertexts of every stored secret, which the master key the backup was taken with opens (restore: see docs/operations.md). Each backup is in the audit log. On PostgreSQL it is refused (400): use `pg_dump`, or base backups with WAL archiving.",
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
        'x-error-types': ['invalid_request', ...OPERATOR_ERRORS],
        'x-error-messages': { invalid_request: 'A backup copies the embedded SQLite database; this installation uses PostgreSQL (DATABASE_URL). Back PostgreSQL up with its own tools: `pg_dump`, or base backups with WAL archiving.' },
      },
    },
    async (request, reply) => {
      const { content, ...backup } = await downloadDatabaseBackup({ ctx: operatorContextOf(request, route), input: {} });
      // Fastify destroys the stream (closing the copy's descriptor) when the client goes away before the end.
      return reply.headers(presentBackupDownloadHeaders(backup)).send(content);
    },
  );
}
