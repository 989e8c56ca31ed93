import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/*
 * The embedded store's SQLite driver depends on the Node.js line, because no single better-sqlite3
 * release runs on all the lines we support:
 * - better-sqlite3 12 aborts the process on Node.js 24.19 and later (a statement's destructor trips
 *   the assertion `env != nullptr` in node::RemoveEnvironmentCleanupHook);
 * - better-sqlite3 13 fixes that, but its binaries use Node-API 10, which Node.js 20 lacks: loading
 *   it there crashes the process.
 * So Node.js 20 runs 12 (the `better-sqlite3` dependency) and 22 or later runs 13, installed under
 * the alias `better-sqlite3-v13`. That alias is an optional dependency whose `engines` (>=22) make
 * npm leave it out on Node.js 20, so one `npm install` fits every line.
 *
 * Both present the same API for everything the store uses (the constructor, pragma, prepare, close
 * and the statements' reader, all, iterate and run), which @types/better-sqlite3 describes.
 */

export type SqliteConnection = BetterSqlite3.Database;
export type SqliteOpenOptions = BetterSqlite3.Options;
type SqliteDriverConstructor = typeof BetterSqlite3;

export interface SqliteDriver {
  /** The name it is installed under in node_modules. */
  readonly packageName: 'better-sqlite3' | 'better-sqlite3-v13';
  readonly majorVersion: 12 | 13;
}

const FIRST_NODE_MAJOR_FOR_13 = 22;

export function sqliteDriverFor(nodeVersion: string): SqliteDriver {
  const nodeMajor = Number.parseInt(nodeVersion, 10);
  return nodeMajor >= FIRST_NODE_MAJOR_FOR_13
    ? { packageName: 'better-sqlite3-v13', majorVersion: 13 }
    : { packageName: 'better-sqlite3', majorVersion: 12 };
}

/** The driver for the Node.js version running this process. */
export const sqliteDriver: SqliteDriver = sqliteDriverFor(process.versions.node);

let loadedConstructor: SqliteDriverConstructor | undefined;

// Loaded on first use rather than imported: a deployment on PostgreSQL needs no SQLite driver, and
// only the chosen one may be loaded (the other can crash this Node.js version).
function loadConstructor(): SqliteDriverConstructor {
  if (loadedConstructor) return loadedConstructor;
  const { packageName, majorVersion } = sqliteDriver;
  const require = createRequire(import.meta.url);
  try {
    require.resolve(packageName);
  } catch {
    throw new Error(
      `The embedded SQLite store on Node.js ${process.versions.node} needs better-sqlite3 ${majorVersion} ` +
        `(package "${packageName}"), which is not installed (an install made with Node.js 20 leaves ` +
        'better-sqlite3 13 out). Run `npm install` with this Node.js version, or set DATABASE_URL to ' +
        'use PostgreSQL.',
    );
  }
  const loaded: unknown = require(packageName);
  if (typeof loaded !== 'function') {
    throw new Error(`"${packageName}" does not export the better-sqlite3 Database constructor`);
  }
  // The module boundary: the package ships no types of its own, so take @types/better-sqlite3's.
  loadedConstructor = loaded as SqliteDriverConstructor;
  return loadedConstructor;
}

export function openSqliteDatabase(file: string, options?: SqliteOpenOptions): SqliteConnection {
  const Database = loadConstructor();
  return new Database(file, options);
}
