import { sql } from 'kysely';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, runInTransaction, type StoreOptions } from '../../src/store/database.ts';

const ROW_BYTES = 4000;
const ROWS_PER_TRANSACTION = 5;
/** Long enough for several checkpoint rounds (one each 500 ms). */
const WRITING_MS = 2500;
/** The most the first round may take to show (it comes 500 ms after the thread has started). */
const WARM_UP_LIMIT_MS = 20_000;

const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

/**
 * Writes transactions of large rows for WRITING_MS, as a serving store would, and reports the
 * bytes written, the largest size the write-ahead log reached and the database file's size before
 * the store is closed (closing checkpoints whatever is left).
 */
async function writeSteadily(file: string, walCheckpoints: StoreOptions['walCheckpoints']) {
  const store = openStore({ kind: 'sqlite', file }, { walCheckpoints });
  await sql`CREATE TABLE IF NOT EXISTS payloads (id integer PRIMARY KEY, body text NOT NULL)`.execute(store.db);
  const body = 'x'.repeat(ROW_BYTES);
  let warmUpRows = 0;
  if (walCheckpoints === 'background' || walCheckpoints === 'this-thread') {
    // The first round comes an interval after the start (and a thread takes a moment more to start:
    // its module loader, its connection), longer on a loaded machine: wait for it, writing a
    // little, so what follows measures the rounds.
    const emptyFile = sizeOf(file);
    const deadline = performance.now() + WARM_UP_LIMIT_MS;
    while (sizeOf(file) <= emptyFile && performance.now() < deadline) {
      await sql`INSERT INTO payloads (body) VALUES ('warm-up')`.execute(store.db);
      warmUpRows += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  let written = 0;
  let largestLog = 0;
  const started = performance.now();
  while (performance.now() - started < WRITING_MS) {
    await runInTransaction(store, async (trx) => {
      for (let row = 0; row < ROWS_PER_TRANSACTION; row += 1) await sql`INSERT INTO payloads (body) VALUES (${body})`.execute(trx);
    });
    written += ROWS_PER_TRANSACTION * ROW_BYTES;
    largestLog = Math.max(largestLog, sizeOf(`${file}-wal`));
    // A serving event loop turns between writes (the checkpoint thread gets the write lock then);
    // the pause keeps the volume written (and the test's disk use) moderate.
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const databaseBeforeClose = sizeOf(file);
  await store.close();
  const check = openStore({ kind: 'sqlite', file });
  const { rows } = await sql<{ rows: number }>`SELECT count(*) AS rows FROM payloads`.execute(check.db);
  await check.close();
  return { written, largestLog, databaseBeforeClose, rowsAfterReopen: Number(rows[0]!.rows) - warmUpRows };
}

describe('background checkpoints of the SQLite write-ahead log', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });
  const newDatabaseFile = (): string => {
    const directory = mkdtempSync(join(tmpdir(), 'tms-wal-checkpoints-'));
    directories.push(directory);
    return join(directory, 'store.sqlite');
  };

  // 'background': a thread of their own (`tms api`); 'this-thread': between the tasks of the
  // thread that opened the store (the workers' thread of `tms start`).
  it.each(['background', 'this-thread'] as const)('%s: copy the log into the database file while writes go on, and keep the log bounded by restarting it', async (walCheckpoints) => {
    const checkpointed = await writeSteadily(newDatabaseFile(), walCheckpoints);
    // Nothing checkpoints a store whose checkpoints are left to another (absent) thread: the control.
    const without = await writeSteadily(newDatabaseFile(), 'elsewhere');

    expect(without.largestLog).toBeGreaterThanOrEqual(without.written);
    expect(without.databaseBeforeClose).toBeLessThan(without.written / 10);

    expect(checkpointed.databaseBeforeClose).toBeGreaterThan(checkpointed.written / 2);
    expect(checkpointed.largestLog).toBeLessThan(checkpointed.written / 2);
    // Nothing written was lost on the way.
    expect(checkpointed.rowsAfterReopen).toBe(checkpointed.written / ROW_BYTES);
    expect(without.rowsAfterReopen).toBe(without.written / ROW_BYTES);
  });
});
