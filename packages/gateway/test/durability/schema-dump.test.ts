/**
 * The committed schema dumps (src/store/schema.sqlite.sql, schema.postgres.sql) are what the
 * migrations make of a new database: a migration that changes the schema without a regenerated
 * dump fails here, saying which line differs and to run `npm run db:schema`. PostgreSQL's part runs
 * when TMS_TEST_DATABASE_URL is set, like every PostgreSQL suite.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIRECTORY } from '../../src/store/migrate.ts';
import { SCHEMA_DUMP_COMMAND, SCHEMA_DUMP_FILES, dumpFreshSchema } from '../../src/store/schema-dump.ts';
import { STORE_KINDS, type StoreKind } from '../harness.ts';

const POSTGRES_ADMIN_URL = process.env.TMS_TEST_DATABASE_URL;

/** Null when the dump is current, else what differs first and how to fix it. */
function staleDumpMessage(file: string, committed: string, fresh: string): string | null {
  if (committed === fresh) return null;
  const committedLines = committed.split('\n');
  const freshLines = fresh.split('\n');
  let line = 0;
  while (committedLines[line] === freshLines[line]) line += 1;
  const show = (text: string | undefined) => (text === undefined ? '(end of file)' : `"${text}"`);
  return [
    `${basename(file)} does not match the migrations: line ${line + 1} is`,
    `  committed: ${show(committedLines[line])}`,
    `  migrated:  ${show(freshLines[line])}`,
    `The migrations changed the schema without the dump (or the dump was edited): run \`${SCHEMA_DUMP_COMMAND}\` and commit both schema files.`,
  ].join('\n');
}

describe.each(STORE_KINDS)('schema dump (%s)', (kind: StoreKind) => {
  const dumpFile = SCHEMA_DUMP_FILES[kind];
  let fresh: string;
  beforeAll(async () => {
    fresh = await dumpFreshSchema(kind, { postgresAdminUrl: POSTGRES_ADMIN_URL });
  }, 60_000);

  it(`the committed ${basename(dumpFile)} is what the migrations make of a new database`, () => {
    const committed = existsSync(dumpFile) ? readFileSync(dumpFile, 'utf8') : '';
    const problem = staleDumpMessage(dumpFile, committed, fresh);
    expect(problem, problem ?? '').toBeNull();
  });

  it('is the same from another new database (stable order, no times or ids)', async () => {
    expect(await dumpFreshSchema(kind, { postgresAdminUrl: POSTGRES_ADMIN_URL })).toBe(fresh);
  }, 60_000);

  describe('after a new migration that changes the schema', () => {
    let directory: string;
    beforeAll(() => {
      directory = mkdtempSync(join(tmpdir(), 'tms-migrations-'));
      cpSync(MIGRATIONS_DIRECTORY, directory, { recursive: true });
      writeFileSync(join(directory, '9999_new_column.sql'), 'ALTER TABLE workspaces ADD COLUMN time_zone text;\n');
    });
    afterAll(() => {
      rmSync(directory, { recursive: true, force: true });
    });

    it('the committed dump is stale, and the failure names the line and the command', async () => {
      const changed = await dumpFreshSchema(kind, { postgresAdminUrl: POSTGRES_ADMIN_URL, migrationsDirectory: directory });
      expect(changed).toContain('time_zone text');
      const problem = staleDumpMessage(dumpFile, fresh, changed);
      expect(problem).toContain(`${basename(dumpFile)} does not match the migrations: line 1 is`);
      expect(problem).toContain('(the last: 9999_new_column)');
      expect(problem).toContain('run `npm run db:schema`');
    }, 60_000);
  });
});
