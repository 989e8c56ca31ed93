import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, parseMasterKey } from './config.ts';

export interface ResolvedSecrets {
  readonly config: Config;
  /** Which secrets were generated now, so start-up can say so. */
  readonly generated: string[];
  readonly file: string | null;
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
  if (config.adminToken && config.masterKey) return { config, generated: [], file: null };
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, 'secrets.json');
  const stored: Partial<SecretsFile> = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<SecretsFile>) : {};
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
  if (generated.length > 0) writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  return {
    config: Object.freeze({
      ...config,
      adminToken: config.adminToken ?? stored.adminToken ?? null,
      masterKey: config.masterKey ?? parseMasterKey(stored.masterKey ?? '', `masterKey in ${file}`),
    }),
    generated,
    file,
  };
}
