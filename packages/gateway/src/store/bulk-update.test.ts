/**
 * The bulk update on a real store: each row gets its own values in one statement per chunk, only
 * where the row still meets the condition, and what was updated comes back. SQLite always;
 * PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateRows } from './bulk-update.ts';
import { openStore, runInTransaction, type Dialect, type Store } from './database.ts';

const POSTGRES_ADMIN_URL = process.env.TMS_TEST_DATABASE_URL;
const DIALECTS: Dialect[] = POSTGRES_ADMIN_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** A store on a fresh database, and how to drop it. */
async function openScratchStore(dialect: Dialect): Promise<{ store: Store; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tms-bulk-'));
    return { store: openStore({ kind: 'sqlite', file: join(dir, 'tms.sqlite') }), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `tms_bulk_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL!);
  url.pathname = `/${name}`;
  return {
    store: openStore({ kind: 'postgres', url: url.toString(), poolSize: 2 }),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

const ROWS = 2500;
const idOf = (index: number) => `dlv_${String(index).padStart(6, '0')}`;

describe.each(DIALECTS)('bulk update (%s)', (dialect) => {
  let scratch: { store: Store; drop(): Promise<void> };

  beforeAll(async () => {
    scratch = await openScratchStore(dialect);
    const { db } = scratch.store;
    await sql`CREATE TABLE webhook_deliveries (id text PRIMARY KEY, lease_expires_at bigint, last_status_code integer, last_error text, updated_at bigint NOT NULL)`.execute(db);
    for (let start = 0; start < ROWS; start += 500) {
      const rows = Array.from({ length: Math.min(500, ROWS - start) }, (_unused, offset) => sql`(${idOf(start + offset)}, ${1000 + start + offset}, NULL, NULL, 0)`);
      await sql`INSERT INTO webhook_deliveries VALUES ${sql.join(rows)}`.execute(db);
    }
  });
  afterAll(async () => {
    await scratch?.store.close();
    await scratch?.drop();
  });

  it('writes each row its own values where the condition holds, over several statements, and returns what it updated', async () => {
    const { store } = scratch;
    // Every third row names a lease it no longer holds: left alone. Values include nulls and quotes.
    const rows = Array.from({ length: ROWS }, (_unused, index) => ({
      id: idOf(index),
      claimed_lease: index % 3 === 0 ? -1 : 1000 + index,
      status_code: index % 2 === 0 ? null : 500 + (index % 100),
      error_text: `it's row ${index}`,
    }));
    const updated = await runInTransaction(store, (trx) =>
      updateRows<{ id: string; last_error: string }>(trx, store.dialect, {
        table: 'webhook_deliveries',
        types: { claimed_lease: 'bigint', status_code: 'integer', error_text: 'text' },
        rows,
        set: sql`last_status_code = x.status_code, last_error = x.error_text, lease_expires_at = NULL, updated_at = ${42}`,
        where: sql`webhook_deliveries.lease_expires_at = x.claimed_lease`,
        returning: ['id', 'last_error'],
      }),
    );
    const expected = rows.filter((_row, index) => index % 3 !== 0);
    expect(updated.map((row) => row.id).sort()).toEqual(expected.map((row) => row.id));
    expect(updated.find((row) => row.id === idOf(1))?.last_error).toBe("it's row 1");

    const stored = await store.db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();
    stored.forEach((row, index) => {
      if (index % 3 === 0) {
        expect(row).toMatchObject({ lease_expires_at: 1000 + index, last_status_code: null, last_error: null, updated_at: 0 });
      } else {
        expect(row).toMatchObject({ lease_expires_at: null, last_status_code: index % 2 === 0 ? null : 500 + (index % 100), last_error: `it's row ${index}`, updated_at: 42 });
      }
    });
  });

  it('runs no statement for no rows', async () => {
    const { store } = scratch;
    const updated = await runInTransaction(store, (trx) =>
      updateRows(trx, store.dialect, { table: 'webhook_deliveries', types: {}, rows: [], set: sql`updated_at = 7`, returning: ['id'] }),
    );
    expect(updated).toEqual([]);
    expect(await store.db.selectFrom('webhook_deliveries').select('id').where('updated_at', '=', 7).execute()).toEqual([]);
  });
});
