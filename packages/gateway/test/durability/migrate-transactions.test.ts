/**
 * The migration runner on each store, with migrations of the test's own in a temporary directory:
 * - one transaction per migration: a failing migration is rolled back whole, the ones before it
 *   stay applied and recorded, and the next run picks up from there;
 * - the SQL each store accepts in a file: trigger bodies, strings and comments with semicolons on
 *   SQLite; dollar-quoted function bodies on PostgreSQL;
 * - per-store pairs (NNNN_intent.sqlite.sql + NNNN_intent.postgres.sql) and the directory mistakes
 *   that are refused before anything is applied;
 * - several processes' worth of concurrent runs on PostgreSQL apply each migration once;
 * - on SQLite, migrations keep temporary storage in files, the serving store in memory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type StoreKind, type TestDatabase } from '../harness.ts';

const NOW = 1_700_000_000_000;

function writeMigrations(directory: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
}

async function recordedVersions(store: Store): Promise<string[]> {
  const rows = await store.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
  return rows.map((row) => row.version);
}

async function tableExists(store: Store, table: string): Promise<boolean> {
  const query =
    store.dialect === 'sqlite'
      ? sql<{ found: number }>`SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = ${table}`
      : sql<{ found: number }>`SELECT count(*)::int AS found FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ${table}`;
  const { rows } = await query.execute(store.db);
  return Number(rows[0]!.found) === 1;
}

describe.each(STORE_KINDS)('migrate, one transaction per migration (%s)', (kind: StoreKind) => {
  let database: TestDatabase;
  let store: Store;
  let directory: string;
  const openedStores: Store[] = [];

  function openAnotherStore(): Store {
    const another = openStore(parseConfig(gatewayEnvironment(database)).database);
    openedStores.push(another);
    return another;
  }

  beforeEach(async () => {
    database = await createTestDatabase(kind);
    store = openAnotherStore();
    directory = mkdtempSync(join(tmpdir(), 'tms-migrations-'));
  });
  afterEach(async () => {
    await Promise.all(openedStores.splice(0).map((opened) => opened.close()));
    await database?.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('a failing migration is rolled back whole; the ones before it stay applied and recorded; a rerun resumes', async () => {
    writeMigrations(directory, {
      '0001_first.sql': 'CREATE TABLE first_table (id text PRIMARY KEY);\n',
      '0002_second.sql': 'CREATE TABLE second_table (id text PRIMARY KEY);\nINSERT INTO second_table (id) VALUES (\'kept\');\n',
      // Its first statement succeeds, its second fails: neither may remain.
      '0003_broken.sql': 'CREATE TABLE third_table (id text PRIMARY KEY);\nINSERT INTO no_such_table (id) VALUES (\'x\');\n',
      '0004_after.sql': 'CREATE TABLE fourth_table (id text PRIMARY KEY);\n',
    });

    const failure = await migrate(store, NOW, directory).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(/^migration 0003_broken failed and was rolled back \(the migrations before it stay applied\): .*no_such_table/);

    expect(await recordedVersions(store)).toEqual(['0001_first', '0002_second']);
    expect(await tableExists(store, 'first_table')).toBe(true);
    expect((await sql<{ id: string }>`SELECT id FROM second_table`.execute(store.db)).rows).toEqual([{ id: 'kept' }]);
    expect(await tableExists(store, 'third_table')).toBe(false);
    expect(await tableExists(store, 'fourth_table')).toBe(false);

    // The operator fixes the migration: the next run applies it and what follows, and only those.
    writeMigrations(directory, { '0003_broken.sql': 'CREATE TABLE third_table (id text PRIMARY KEY);\n' });
    expect(await migrate(store, NOW, directory)).toEqual(['0003_broken', '0004_after']);
    expect(await recordedVersions(store)).toEqual(['0001_first', '0002_second', '0003_broken', '0004_after']);
    expect(await migrate(store, NOW, directory)).toEqual([]);
  });

  it('a per-store pair is one migration: each store runs its own file, recorded as NNNN_intent', async () => {
    writeMigrations(directory, {
      '0001_shared.sql': 'CREATE TABLE which_store (id integer PRIMARY KEY, ran text);\n',
      '0002_pair.sqlite.sql': "INSERT INTO which_store (id, ran) VALUES (1, 'sqlite file');\n",
      '0002_pair.postgres.sql': "INSERT INTO which_store (id, ran) VALUES (1, 'postgres file');\n",
    });
    expect(await migrate(store, NOW, directory)).toEqual(['0001_shared', '0002_pair']);
    expect(await recordedVersions(store)).toEqual(['0001_shared', '0002_pair']);
    const { rows } = await sql<{ ran: string }>`SELECT ran FROM which_store`.execute(store.db);
    expect(rows).toEqual([{ ran: kind === 'sqlite' ? 'sqlite file' : 'postgres file' }]);
  });

  it.each<{ mistake: string; files: Record<string, string>; message: string }>([
    {
      mistake: 'a pair with one store\'s file missing',
      files: { '0002_pair.sqlite.sql': 'SELECT 1;' },
      message: 'migration 0002_pair: 0002_pair.sqlite.sql has no 0002_pair.postgres.sql beside it; a per-store migration needs a file for each store',
    },
    {
      mistake: 'a pair with the other store\'s file missing',
      files: { '0002_pair.postgres.sql': 'SELECT 1;' },
      message: 'migration 0002_pair: 0002_pair.postgres.sql has no 0002_pair.sqlite.sql beside it; a per-store migration needs a file for each store',
    },
    {
      mistake: 'a shared file and a pair with the same number',
      files: { '0002_pair.sql': 'SELECT 1;', '0002_pair.sqlite.sql': 'SELECT 1;', '0002_pair.postgres.sql': 'SELECT 1;' },
      message: 'migration 0002_pair: a shared file and per-store files at once (0002_pair.postgres.sql, 0002_pair.sql, 0002_pair.sqlite.sql); keep one or the other',
    },
    {
      mistake: 'two migrations with one number',
      files: { '0002_one.sql': 'SELECT 1;', '0002_other.sql': 'SELECT 1;' },
      message: 'migration 0002: several migrations share the number (0002_one.sql, 0002_other.sql)',
    },
    {
      mistake: 'a pair whose files name different intents',
      files: { '0002_one.sqlite.sql': 'SELECT 1;', '0002_other.postgres.sql': 'SELECT 1;' },
      message: 'migration 0002: several migrations share the number (0002_one.sqlite.sql, 0002_other.postgres.sql)',
    },
    {
      mistake: 'a file named against the rule',
      files: { '0002_pair.postgresql.sql': 'SELECT 1;' },
      message: 'migration file 0002_pair.postgresql.sql: the name must be NNNN_intent.sql, or NNNN_intent.sqlite.sql with NNNN_intent.postgres.sql',
    },
  ])('refuses $mistake before applying anything', async ({ files, message }) => {
    writeMigrations(directory, { '0001_first.sql': 'CREATE TABLE first_table (id text PRIMARY KEY);\n', ...files });
    await expect(migrate(store, NOW, directory)).rejects.toThrow(message);
    expect(await tableExists(store, 'first_table')).toBe(false);
    expect(await tableExists(store, 'schema_migrations')).toBe(false);
  });

  it('ignores files that are not SQL, such as the directory\'s README', async () => {
    writeMigrations(directory, { 'README.md': '# notes; not SQL\n', '0001_first.sql': 'CREATE TABLE first_table (id text PRIMARY KEY);\n' });
    expect(await migrate(store, NOW, directory)).toEqual(['0001_first']);
  });

  if (kind === 'sqlite') {
    it('SQLite: runs a file with a trigger body, semicolons in strings and names, and comments', async () => {
      writeMigrations(directory, {
        '0001_notes.sql': [
          '-- Notes; with a comment that has semicolons; in it.',
          'CREATE TABLE notes (id integer PRIMARY KEY, "body;text" text NOT NULL DEFAULT \'a;b\', changes integer NOT NULL DEFAULT 0);',
          '/* A block comment; spanning',
          '   two lines; */',
          'CREATE TRIGGER notes_count AFTER UPDATE OF "body;text" ON notes',
          'BEGIN',
          '  UPDATE notes SET changes = changes + 1 WHERE id = new.id;',
          "  UPDATE notes SET \"body;text\" = CASE WHEN new.\"body;text\" = '' THEN 'empty; really' ELSE new.\"body;text\" END WHERE id = new.id AND new.\"body;text\" = '';",
          'END;',
          "INSERT INTO notes (id) VALUES (1); -- it's 'a;b' by default",
        ].join('\n'),
      });
      expect(await migrate(store, NOW, directory)).toEqual(['0001_notes']);
      await sql`UPDATE notes SET "body;text" = '' WHERE id = 1`.execute(store.db);
      const { rows } = await sql<{ body: string; changes: number }>`SELECT "body;text" AS body, changes FROM notes`.execute(store.db);
      expect(rows).toEqual([{ body: 'empty; really', changes: 1 }]);
    });

    it('SQLite: migrations sort in temporary files (an index over millions of rows), a serving store keeps temporary tables in memory', async () => {
      const temporaryStorage = async () => (await sql<{ temp_store: number }>`SELECT temp_store FROM pragma_temp_store`.execute(store.db)).rows[0]!.temp_store;
      const [inFiles, inMemory] = [1, 2];
      expect(await temporaryStorage()).toBe(inMemory);
      writeMigrations(directory, {
        '0001_seen.sql': 'CREATE TABLE seen AS SELECT temp_store FROM pragma_temp_store;',
        '0002_broken.sql': 'CREATE TABLE seen_again AS SELECT temp_store FROM pragma_temp_store; SELECT * FROM no_such_table;',
      });
      await expect(migrate(store, NOW, directory)).rejects.toThrow(/0002_broken failed/);
      const { rows } = await sql<{ temp_store: number }>`SELECT temp_store FROM seen`.execute(store.db);
      expect(rows).toEqual([{ temp_store: inFiles }]);
      // Back to memory after a run, also one that failed.
      expect(await temporaryStorage()).toBe(inMemory);
    });
  }

  if (kind === 'postgres') {
    it('PostgreSQL: runs a file with $$ and $tag$ function bodies, semicolons in strings and comments, and a trigger', async () => {
      writeMigrations(directory, {
        '0001_notes.sql': [
          '-- Notes; with a comment that has semicolons; in it.',
          "CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL DEFAULT 'a;b', changes integer NOT NULL DEFAULT 0);",
          '/* A block comment; /* nested; */ spanning',
          '   two lines; */',
          'CREATE FUNCTION notes_count() RETURNS trigger LANGUAGE plpgsql AS $$',
          'BEGIN',
          '  NEW.changes := OLD.changes + 1;',
          "  IF NEW.body = '' THEN NEW.body := 'empty; really'; END IF;",
          '  RETURN NEW;',
          'END;',
          '$$;',
          'CREATE TRIGGER notes_count BEFORE UPDATE ON notes FOR EACH ROW EXECUTE FUNCTION notes_count();',
          'CREATE FUNCTION shout(words text) RETURNS text LANGUAGE sql IMMUTABLE AS $body$',
          "  SELECT upper(words) || '; $$ is not the end here;'",
          '$body$;',
          "INSERT INTO notes (id) VALUES (1); -- it's 'a;b' by default",
        ].join('\n'),
      });
      expect(await migrate(store, NOW, directory)).toEqual(['0001_notes']);
      await sql`UPDATE notes SET body = '' WHERE id = 1`.execute(store.db);
      const { rows } = await sql<{ body: string; changes: number; shouted: string }>`SELECT body, changes, shout('hi') AS shouted FROM notes`.execute(store.db);
      expect(rows).toEqual([{ body: 'empty; really', changes: 1, shouted: 'HI; $$ is not the end here;' }]);
    });

    it('PostgreSQL: runs started at once on separate connections apply each migration exactly once', async () => {
      const files: Record<string, string> = {};
      // Without IF NOT EXISTS: a migration applied twice fails the run that repeats it.
      for (let number = 1; number <= 8; number += 1) files[`${String(number).padStart(4, '0')}_step.sql`] = `CREATE TABLE step_${number} (id text PRIMARY KEY);\n`;
      writeMigrations(directory, files);
      const stores = [store, openAnotherStore(), openAnotherStore(), openAnotherStore()];
      const appliedByEach = await Promise.all(stores.map((each) => migrate(each, NOW, directory)));
      const everyVersion = Object.keys(files).map((name) => name.replace(/\.sql$/, '')).sort();
      expect(appliedByEach.flat().sort()).toEqual(everyVersion);
      // Each run applied its versions in order, so the runs interleave without reordering.
      for (const applied of appliedByEach) expect(applied).toEqual([...applied].sort());
      expect(await recordedVersions(store)).toEqual(everyVersion);
    });
  }
});
