/**
 * The migrations directory: which file each store runs for each migration. A migration is either
 * one file both stores run (NNNN_intent.sql) or a pair, one per store (NNNN_intent.sqlite.sql and
 * NNNN_intent.postgres.sql). Either way it is recorded as NNNN_intent.
 */
import { readdirSync } from 'node:fs';
import type { Dialect } from './database.ts';

export interface MigrationFiles {
  /** NNNN_intent, as recorded in schema_migrations. */
  readonly version: string;
  /** The file name each store runs (the same one for a shared migration). */
  readonly fileFor: Readonly<Record<Dialect, string>>;
}

const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];
const FILE_NAME = /^(?<number>\d{4})_(?<intent>[a-z0-9_]+)(?:\.(?<dialect>sqlite|postgres))?\.sql$/;
const NAMING_RULE = 'NNNN_intent.sql, or NNNN_intent.sqlite.sql with NNNN_intent.postgres.sql';

interface NamedFile {
  readonly name: string;
  readonly version: string;
  /** Null for a file both stores run. */
  readonly dialect: Dialect | null;
}

export class MigrationFilesError extends Error {
  override readonly name = 'MigrationFilesError';
}

function parseFileName(name: string): NamedFile {
  const match = FILE_NAME.exec(name);
  if (!match?.groups) throw new MigrationFilesError(`migration file ${name}: the name must be ${NAMING_RULE}`);
  const { number, intent, dialect } = match.groups;
  return { name, version: `${number}_${intent}`, dialect: (dialect as Dialect | undefined) ?? null };
}

function migrationFromFiles(number: string, files: readonly NamedFile[]): MigrationFiles {
  const versions = [...new Set(files.map((file) => file.version))];
  const names = files.map((file) => file.name).join(', ');
  if (versions.length > 1) throw new MigrationFilesError(`migration ${number}: several migrations share the number (${names})`);
  const version = versions[0]!;
  const shared = files.find((file) => file.dialect === null);
  if (shared) {
    if (files.length > 1) throw new MigrationFilesError(`migration ${version}: a shared file and per-store files at once (${names}); keep one or the other`);
    return { version, fileFor: { sqlite: shared.name, postgres: shared.name } };
  }
  const fileFor: Partial<Record<Dialect, string>> = {};
  for (const file of files) fileFor[file.dialect!] = file.name;
  for (const dialect of DIALECTS) {
    if (fileFor[dialect] === undefined) {
      throw new MigrationFilesError(`migration ${version}: ${names} has no ${version}.${dialect}.sql beside it; a per-store migration needs a file for each store`);
    }
  }
  return { version, fileFor: fileFor as Record<Dialect, string> };
}

/**
 * Every migration in the directory, in version order. Refuses a directory that is not coherent
 * for both stores, whichever store is running, so a mistake shows on the first run anywhere.
 */
export function readMigrationFiles(directory: string): MigrationFiles[] {
  const byNumber = new Map<string, NamedFile[]>();
  for (const name of readdirSync(directory).filter((entry) => entry.endsWith('.sql')).sort()) {
    const file = parseFileName(name);
    const number = file.version.slice(0, 4);
    byNumber.set(number, [...(byNumber.get(number) ?? []), file]);
  }
  return [...byNumber.keys()].sort().map((number) => migrationFromFiles(number, byNumber.get(number)!));
}
