/**
 * Migrations are safe when several processes start at once: 4 `tms migrate` processes started
 * together on one fresh database all succeed, each migration is applied by exactly one of them (each
 * runs in its own transaction, so the processes may take turns), and schema_migrations holds each
 * version once.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore } from '../../src/store/database.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';
import { spawnTms } from './support.ts';

const PROCESSES = 4;
const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));
// A migration is NNNN_intent.sql or the pair NNNN_intent.sqlite.sql + NNNN_intent.postgres.sql.
const VERSIONS = [
  ...new Set(
    readdirSync(MIGRATIONS_DIR)
      .filter((name) => name.endsWith('.sql'))
      .map((name) => name.replace(/(\.sqlite|\.postgres)?\.sql$/, '')),
  ),
].sort();

/** Starts PROCESSES `tms migrate` at once and waits for all of them (killing any left on failure). */
async function migrateConcurrently(env: Record<string, string>) {
  const processes = Array.from({ length: PROCESSES }, () => spawnTms(['migrate'], env));
  try {
    const exits = await Promise.all(processes.map((handle) => handle.exited));
    return processes.map((handle, index) => ({ ...exits[index]!, output: handle.output() }));
  } finally {
    await Promise.all(processes.map((handle) => handle.kill()));
  }
}

/** The versions a process reports applying; none when it found the database up to date. */
function appliedBy(output: string): string[] {
  const reported = /^applied: (.+)$/m.exec(output);
  return reported ? reported[1]!.split(', ') : [];
}

/** Every process exited 0, and each either applied some migrations or found nothing left to do. */
function expectEachAppliedOnce(results: Awaited<ReturnType<typeof migrateConcurrently>>): void {
  const outputs = results.map((result) => result.output).join('\n---\n');
  for (const result of results) {
    expect({ code: result.code, signal: result.signal }, result.output).toEqual({ code: 0, signal: null });
    if (appliedBy(result.output).length === 0) expect(result.output).toContain('database is up to date');
  }
  expect(results.flatMap((result) => appliedBy(result.output)).sort(), outputs).toEqual(VERSIONS);
}

async function readSchemaMigrations(env: Record<string, string>): Promise<string[]> {
  const store = openStore(parseConfig(env).database);
  try {
    const rows = await store.db.selectFrom('schema_migrations').select('version').execute();
    // The schema is really there, not just recorded.
    await store.db.selectFrom('messages').select('id').limit(1).execute();
    await store.db.selectFrom('message_states').select('id').limit(1).execute();
    await store.db.selectFrom('idempotency_records').select('idempotency_key').limit(1).execute();
    return rows.map((row) => row.version).sort();
  } finally {
    await store.close();
  }
}

describe.each(STORE_KINDS)('concurrent `tms migrate` (%s)', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    env = gatewayEnvironment(database);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it(`${PROCESSES} processes on a fresh database: all exit 0, each migration applied once`, async () => {
    expect(VERSIONS.length).toBeGreaterThan(0);
    const results = await migrateConcurrently(env);
    expectEachAppliedOnce(results);
    expect(await readSchemaMigrations(env)).toEqual(VERSIONS);
  }, 180_000);

  it(`${PROCESSES} processes again on the migrated database: all exit 0 and change nothing`, async () => {
    const results = await migrateConcurrently(env);
    for (const result of results) {
      expect({ code: result.code, signal: result.signal }, result.output).toEqual({ code: 0, signal: null });
      expect(result.output).toContain('database is up to date');
    }
    expect(await readSchemaMigrations(env)).toEqual(VERSIONS);
  }, 180_000);
});

/**
 * Embedded mode as an operator runs it: no secrets in the environment, only a data directory, so
 * every process also reads (or creates) <data dir>/secrets.json while the others do the same.
 */
describe('concurrent `tms migrate` on a fresh embedded data directory without secrets in the environment', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it(`${PROCESSES} processes: all exit 0, each migration applied once`, async () => {
    const env = { TMS_DATA_DIR: database.env.TMS_DATA_DIR!, TMS_LOG_LEVEL: 'silent' };
    const results = await migrateConcurrently(env);
    expectEachAppliedOnce(results);
    expect(await readSchemaMigrations(env)).toEqual(VERSIONS);
  }, 180_000);
});
