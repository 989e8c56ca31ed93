import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from './config.ts';
import { ConfigError } from './config-error.ts';

/**
 * Every command but `tms start` works on an existing installation, and refuses to create its data
 * directory: run from another directory, it would otherwise set up a new, empty store there (and
 * secrets to go with it), where an operator could create a customer by mistake. `tms admin` needs
 * the embedded database itself to exist too. The message names the directory it looked in.
 */
export function requireExistingInstallation(config: Config, command: string, needs: { database: boolean }): void {
  const usesDataDirectory = config.database.kind === 'sqlite' || !config.adminToken || !config.masterKey;
  if (!usesDataDirectory) return;
  const directory = resolve(config.dataDir);
  const where = `Run \`${command}\` where \`tms start\` runs (TMS_DATA_DIR is relative to the current directory), set TMS_DATA_DIR to the installation's data directory, or set DATABASE_URL for PostgreSQL.`;
  if (!existsSync(directory)) throw new ConfigError('TMS_DATA_DIR', `names ${directory}, which does not exist; \`${command}\` does not create a data directory. ${where}`);
  if (needs.database && config.database.kind === 'sqlite' && !existsSync(config.database.file)) {
    throw new ConfigError('TMS_DATA_DIR', `names ${directory}, which holds no database (${config.database.file}); \`${command}\` does not create one. ${where}`);
  }
}

/**
 * A master key is generated only together with a new database. Stored secrets of an existing
 * embedded database are encrypted under the key its secrets.json held: one restored without that
 * file (or run without the TMS_MASTER_KEY it was used with) must not get a fresh key, which would
 * read none of them and encrypt new ones under a key that goes with nothing.
 */
export function refuseNewKeyForExistingDatabase(config: Config, secretsFile: string, secretsFileExists: boolean): void {
  if (config.database.kind !== 'sqlite' || !existsSync(config.database.file)) return;
  const directory = resolve(config.dataDir);
  const missing = secretsFileExists ? `its secrets file ${secretsFile} holds no masterKey` : `it has no secrets file (${secretsFile})`;
  throw new ConfigError(
    'TMS_MASTER_KEY',
    `is not set, and ${directory} holds a database (${config.database.file}) but ${missing}. The secrets stored in that database are encrypted under the master key that file held, so no new key is generated for it. Restore secrets.json from the backup taken with the database, or set TMS_MASTER_KEY to the key it held; if that key is lost for good, see *Custody of the master key* in the README.`,
  );
}
