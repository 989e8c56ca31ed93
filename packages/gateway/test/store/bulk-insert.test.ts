/**
 * The bulk insert on a real store. On SQLite its statements run OR FAIL (no statement journal), so a
 * statement that fails part-way leaves the rows before the failing one in the transaction: the
 * transaction that rolls back on the error must take them with it, and a batch is all or nothing.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { insertRows } from '../../src/store/bulk-insert.ts';
import { openStore, runInTransaction, type Store } from '../../src/store/database.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

interface ScratchRow {
  id: string;
  label: string;
}

const rowsOf = (from: number, count: number): ScratchRow[] => Array.from({ length: count }, (_unused, offset) => ({ id: `row_${String(from + offset).padStart(4, '0')}`, label: `label ${from + offset}` }));

describe.each(STORE_KINDS)('bulk insert (%s)', (kind) => {
  let database: TestDatabase;
  let store: Store;
  const count = async () => Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM scratch_rows`.execute(store.db)).rows[0]!.n);

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = openStore(parseConfig(gatewayEnvironment(database)).database);
    await sql`CREATE TABLE scratch_rows (id text PRIMARY KEY, label text NOT NULL)`.execute(store.db);
    await runInTransaction(store, (trx) => insertRows(trx, store.dialect, 'scratch_rows', rowsOf(0, 10)));
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('commits none of a batch whose statement fails part-way, over several statements', async () => {
    // 312 rows, SQLite's statements of 256, 32, 16 and 8: the 301st exists, in the middle of the
    // third statement, after two statements and twelve rows of its own went in.
    const batch = [...rowsOf(100, 300), ...rowsOf(5, 1), ...rowsOf(400, 11)];
    await expect(runInTransaction(store, (trx) => insertRows(trx, store.dialect, 'scratch_rows', batch))).rejects.toThrow(/unique|UNIQUE|duplicate/);
    expect(await count()).toBe(10);
  });

  it('skips the rows a conflict rule names, returning those it inserted, and keeps the rest', async () => {
    const inserted = await runInTransaction(store, (trx) =>
      insertRows(trx, store.dialect, 'scratch_rows', [...rowsOf(8, 4), ...rowsOf(20, 2)], { conflict: { column: 'id', returning: 'id' } }),
    );
    expect(inserted.map((row) => row.id).sort()).toEqual(['row_0010', 'row_0011', 'row_0020', 'row_0021']);
    expect(await count()).toBe(14);
  });
});
