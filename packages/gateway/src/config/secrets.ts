import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, type Config, parseMasterKey } from './config.ts';
import { refuseNewKeyForExistingDatabase } from './data-directory.ts';

export interface ResolvedSecrets {
  readonly config: Config;
  /** Which secrets were generated now, so start-up can say so. */
  readonly generated: string[];
  readonly file: string | null;
  /** True when the admin token was read from or written to the secrets file (so start-up may print it). */
  readonly adminTokenFromFile: boolean;
}

interface SecretsFile {
  adminToken: string;
  masterKey: string;
  /** During a rotation: the key secrets may still be under (read, never used to encrypt). */
  previousMasterKey?: string;
}

/**
 * Embedded mode: a secret not given in the environment is read from, or generated into,
 * <data dir>/secrets.json with mode 0600; a master key only for a data directory without a
 * database yet (data-directory.ts). With DATABASE_URL both are required (config.ts).
 */
export function resolveSecrets(config: Config): ResolvedSecrets {
  if (config.adminToken && config.masterKey) return { config, generated: [], file: null, adminTokenFromFile: false };
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, 'secrets.json');
  const stored = existsSync(file) ? readSecretsFile(file) : {};
  const generated: string[] = [];
  // Generate only what neither the environment nor the file gives, so start-up reports it truthfully.
  if (!config.adminToken && !stored.adminToken) {
    stored.adminToken = randomBytes(24).toString('base64url');
    generated.push('TMS_ADMIN_TOKEN');
  }
  if (!config.masterKey && !stored.masterKey) {
    refuseNewKeyForExistingDatabase(config, file, existsSync(file));
    stored.masterKey = randomBytes(32).toString('hex');
    generated.push('TMS_MASTER_KEY');
  }
  if (generated.length > 0) {
    const winner = storeSecrets(file, stored, existsSync(file));
    // Another process started at the same moment and stored its secrets first: use those.
    if (winner !== stored) return resolveSecrets(config);
  }
  return {
    config: Object.freeze({
      ...config,
      adminToken: config.adminToken ?? stored.adminToken ?? null,
      masterKey: config.masterKey ?? parseMasterKey(stored.masterKey ?? '', `masterKey in ${file}`),
      // The file's previous key belongs to the file's key: beside a key from the environment it means nothing.
      previousMasterKey: config.previousMasterKey ?? (config.masterKey || !stored.previousMasterKey ? null : parseMasterKey(stored.previousMasterKey, `previousMasterKey in ${file}`)),
      masterKeyFile: config.masterKey ? null : file,
    }),
    generated,
    file,
    adminTokenFromFile: !config.adminToken,
  };
}

function readSecretsFile(file: string): Partial<SecretsFile> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Partial<SecretsFile>;
  } catch {
    // reported below
  }
  throw new ConfigError(file, 'is not a valid secrets file (JSON with adminToken and masterKey); restore it from a backup, or remove it only if nothing was ever encrypted with its masterKey');
}

/**
 * Writes the secrets file atomically (a temporary file, then link or rename), so a crash or a
 * concurrent start never leaves half a file. A new file is created with link(), which fails when
 * another process created it first; that process's secrets then win. Returns what is stored.
 */
function storeSecrets(file: string, secrets: Partial<SecretsFile>, replace: boolean): Partial<SecretsFile> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  try {
    // The file holds the only copy of a generated master key: on disk before it replaces anything.
    syncToDisk(temporary);
    if (replace) renameSync(temporary, file);
    else linkSync(temporary, file);
    syncToDisk(dirname(file));
    return secrets;
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
    return readSecretsFile(file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

function syncToDisk(path: string): void {
  const descriptor = openSync(path, 'r');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** The two keys of the secrets file once a new one is staged. */
export interface StagedMasterKey {
  readonly masterKey: Buffer;
  readonly previousMasterKey: Buffer;
}

/**
 * Embedded rotation, first step: a new master key replaces the file's, and the old one stays as
 * previousMasterKey, in one atomic replacement of the file. Processes read the file at start, so
 * they use the new key from their next start on. Refused while a previous key is still there: that
 * rotation is not finished, and its key must not be dropped unseen.
 */
export function stageNewMasterKey(file: string): StagedMasterKey {
  const stored = readSecretsFile(file);
  if (!stored.masterKey) throw new ConfigError(file, 'holds no masterKey: there is no key to rotate');
  if (stored.previousMasterKey) {
    throw new ConfigError(file, 'already holds a previousMasterKey: a rotation is under way. Finish it (restart, `tms admin rotate-master-key`, then `--forget-previous`) before starting another');
  }
  const previousMasterKey = parseMasterKey(stored.masterKey, `masterKey in ${file}`);
  const masterKey = randomBytes(32);
  storeSecrets(file, { ...stored, masterKey: masterKey.toString('hex'), previousMasterKey: stored.masterKey }, true);
  return { masterKey, previousMasterKey };
}

/**
 * Embedded rotation, last step: removes previousMasterKey from the file (atomically), provided the
 * file's current key is still `expectedMasterKey` (the one every secret was just checked against).
 * Returns whether there was a previous key to remove.
 */
export function forgetPreviousMasterKey(file: string, expectedMasterKey: Buffer): boolean {
  const stored = readSecretsFile(file);
  if (!stored.masterKey || !parseMasterKey(stored.masterKey, `masterKey in ${file}`).equals(expectedMasterKey)) {
    throw new ConfigError(file, 'holds another masterKey than this command started with; run the command again');
  }
  if (!stored.previousMasterKey) return false;
  const { previousMasterKey: _dropped, ...rest } = stored;
  storeSecrets(file, rest, true);
  return true;
}
