import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config, parseMasterKey } from './config.ts';

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
}

/**
 * Embedded mode: a secret not given in the environment is read from, or generated into,
 * <data dir>/secrets.json with mode 0600. With DATABASE_URL both are required (config.ts).
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
    if (replace) {
      renameSync(temporary, file);
      return secrets;
    }
    linkSync(temporary, file);
    return secrets;
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
    return readSecretsFile(file);
  } finally {
    rmSync(temporary, { force: true });
  }
}
