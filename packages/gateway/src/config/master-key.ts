import type { Config } from './config.ts';
import { ConfigError } from './config-error.ts';

/**
 * How TMS_MASTER_KEY_LOST_IDS names the secrets from before ciphertexts carried a key id: they name
 * no key, so only this word can declare them lost.
 */
export const FIRST_FORMAT_KEY_ID = 'legacy';

/** What a master key must look like, in words shared by the error message and the README. */
export const MASTER_KEY_FORM = '32 bytes, as 64 hex characters or base64';

/** Accepts 32 bytes as 64 hex characters or as base64. The message never repeats the value: it is a secret. */
export function parseMasterKey(raw: string, name = 'TMS_MASTER_KEY'): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(name, `must be ${MASTER_KEY_FORM}`);
  return key;
}

/**
 * Every key a stored secret may be under, in the order they are tried: the current key first (the
 * only one that encrypts), then the previous one during a rotation. Null without a master key.
 */
export function masterKeyRing(config: Pick<Config, 'masterKey' | 'previousMasterKey'>): readonly Buffer[] | null {
  if (!config.masterKey) return null;
  const previous = config.previousMasterKey;
  return previous && !previous.equals(config.masterKey) ? [config.masterKey, previous] : [config.masterKey];
}
