/** The thread of an online backup (see sqlite-backup.ts): one copy, its outcome posted back, then the thread ends. */
import { parentPort, workerData } from 'node:worker_threads';
import { backupSqliteDatabase, describeBackupFailure, type FromBackupThread, type SqliteBackupRequest } from './sqlite-backup.ts';

const port = parentPort;
if (!port) throw new Error('sqlite-backup-thread runs only as a worker thread');
const answer = (message: FromBackupThread): void => port.postMessage(message);
void backupSqliteDatabase(workerData as SqliteBackupRequest)
  .then(
    (result) => answer({ kind: 'done', result }),
    (error: unknown) => answer({ kind: 'failed', failure: describeBackupFailure(error) }),
  )
  .finally(() => port.close());
