/**
 * SQLite migrations are cut into statements by SQLite's own completeness rule: a semicolon inside a
 * string, a quoted name, a comment or a trigger body does not end a statement. (PostgreSQL runs
 * each file whole; migrate-transactions.test.ts covers dollar-quoted bodies there.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIRECTORY } from '../../src/store/migrate.ts';
import { splitSqliteStatements } from '../../src/store/sqlite-statements.ts';

describe('splitSqliteStatements', () => {
  it('cuts at each semicolon between statements, dropping blank ones', () => {
    expect(splitSqliteStatements('CREATE TABLE a (x text);\n\nCREATE TABLE b (y text);;\n')).toEqual([
      'CREATE TABLE a (x text);',
      'CREATE TABLE b (y text);',
    ]);
  });

  it('keeps the last statement when it has no semicolon', () => {
    expect(splitSqliteStatements('CREATE TABLE a (x text);\nCREATE INDEX a_x ON a (x)')).toEqual(['CREATE TABLE a (x text);', 'CREATE INDEX a_x ON a (x)']);
  });

  it('does not cut at semicolons inside strings, doubled quotes included', () => {
    const text = "INSERT INTO notes VALUES ('a; b', 'it''s; fine');\nINSERT INTO notes VALUES (';', '');";
    expect(splitSqliteStatements(text)).toEqual(["INSERT INTO notes VALUES ('a; b', 'it''s; fine');", "INSERT INTO notes VALUES (';', '');"]);
  });

  it('does not cut at semicolons inside quoted names ("", ``, [])', () => {
    const text = 'CREATE TABLE "odd;name" ("a;""b" text, `c;d` text, [e;f] text);\nSELECT 1;';
    expect(splitSqliteStatements(text)).toEqual(['CREATE TABLE "odd;name" ("a;""b" text, `c;d` text, [e;f] text);', 'SELECT 1;']);
  });

  it('does not cut at semicolons inside comments, and keeps a statement\'s leading comment with it', () => {
    const text = [
      '-- first; still a comment',
      "CREATE TABLE a (x text DEFAULT '--not a comment'); -- trailing; comment",
      '/* block; comment',
      '   over lines; */ CREATE TABLE b (y text /* ; */);',
      '-- a closing comment with no statement;',
    ].join('\n');
    expect(splitSqliteStatements(text)).toEqual([
      "-- first; still a comment\nCREATE TABLE a (x text DEFAULT '--not a comment');",
      '-- trailing; comment\n/* block; comment\n   over lines; */ CREATE TABLE b (y text /* ; */);',
    ]);
  });

  it('keeps a CREATE TRIGGER body, with its inner statements and CASE ... END, as one statement', () => {
    const trigger = [
      'CREATE TEMP TRIGGER IF NOT EXISTS notes_touch AFTER UPDATE ON notes',
      'BEGIN',
      "  UPDATE notes SET body = CASE WHEN new.body = '' THEN 'empty;' ELSE new.body END WHERE id = new.id;",
      '  DELETE FROM notes WHERE id IS NULL;',
      'END;',
    ].join('\n');
    expect(splitSqliteStatements(`CREATE TABLE notes (id integer, body text);\n${trigger}\nSELECT 1;`)).toEqual([
      'CREATE TABLE notes (id integer, body text);',
      trigger,
      'SELECT 1;',
    ]);
  });

  it('treats "end" and "create" inside names and ordinary statements as plain words', () => {
    const text = 'CREATE TABLE trigger_log (end_at bigint, created text);\nCREATE INDEX trigger_log_end ON trigger_log (end_at);';
    expect(splitSqliteStatements(text)).toEqual(['CREATE TABLE trigger_log (end_at bigint, created text);', 'CREATE INDEX trigger_log_end ON trigger_log (end_at);']);
  });

  it('yields nothing for a file of comments only', () => {
    expect(splitSqliteStatements('-- nothing here;\n/* nor; here */\n')).toEqual([]);
  });

  it('cuts every shipped migration SQLite runs into statements that each start with SQL after their comments', () => {
    const sqliteFiles = readdirSync(MIGRATIONS_DIRECTORY).filter((name) => /^\d{4}_[a-z0-9_]+(\.sqlite)?\.sql$/.test(name));
    expect(sqliteFiles.length).toBeGreaterThan(0);
    for (const name of sqliteFiles) {
      const statements = splitSqliteStatements(readFileSync(join(MIGRATIONS_DIRECTORY, name), 'utf8'));
      expect(statements.length, name).toBeGreaterThan(0);
      for (const statement of statements) {
        const withoutComments = statement.replace(/^(\s*--[^\n]*\n)+/, '').trim();
        expect(withoutComments, `${name}: ${statement}`).toMatch(/^(CREATE|ALTER|DROP|INSERT|UPDATE|DELETE|SELECT)\b[\s\S]*;$/);
      }
    }
  });
});
