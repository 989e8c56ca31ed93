import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from './config.ts';
import { ConfigError } from './config-error.ts';
import { masterKeyRing } from './master-key.ts';
import { forgetPreviousMasterKey, resolveSecrets, stageNewMasterKey } from './secrets.ts';

const ADMIN_TOKEN = 'operator-token-0123456789';
const directories: string[] = [];

function dataDirectory(contents?: object): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tms-secrets-'));
  directories.push(dir);
  const file = join(dir, 'secrets.json');
  if (contents) writeFileSync(file, JSON.stringify(contents), { mode: 0o600 });
  return { dir, file };
}

const readFile = (file: string): Record<string, string> => JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;

afterEach(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the previous master key', () => {
  it('comes from the secrets file with the file\'s key, and is tried after it', () => {
    const current = randomBytes(32);
    const previous = randomBytes(32);
    const { dir, file } = dataDirectory({ adminToken: ADMIN_TOKEN, masterKey: current.toString('hex'), previousMasterKey: previous.toString('hex') });
    const { config } = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }));
    expect(config.masterKey).toEqual(current);
    expect(config.previousMasterKey).toEqual(previous);
    expect(config.masterKeyFile).toBe(file);
    expect(masterKeyRing(config)).toEqual([current, previous]);
  });

  it('is ignored in the file when TMS_MASTER_KEY comes from the environment; TMS_MASTER_KEY_PREVIOUS is used', () => {
    const { dir } = dataDirectory({ masterKey: randomBytes(32).toString('hex'), previousMasterKey: randomBytes(32).toString('hex') });
    const fromEnvironment = randomBytes(32);
    const withoutPrevious = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_MASTER_KEY: fromEnvironment.toString('hex') })).config;
    expect(withoutPrevious.previousMasterKey).toBeNull();
    expect(withoutPrevious.masterKeyFile).toBeNull();
    const previous = randomBytes(32);
    const withPrevious = resolveSecrets(
      parseConfig({ TMS_DATA_DIR: dir, TMS_MASTER_KEY: fromEnvironment.toString('hex'), TMS_MASTER_KEY_PREVIOUS: previous.toString('base64') }),
    ).config;
    expect(masterKeyRing(withPrevious)).toEqual([fromEnvironment, previous]);
  });

  it('is not tried twice when it equals the current key', () => {
    const key = randomBytes(32);
    expect(masterKeyRing({ masterKey: key, previousMasterKey: Buffer.from(key) })).toEqual([key]);
    expect(masterKeyRing({ masterKey: null, previousMasterKey: key })).toBeNull();
  });

  it('a broken previousMasterKey in the file stops start-up and names it, without the value', () => {
    const { dir } = dataDirectory({ adminToken: ADMIN_TOKEN, masterKey: randomBytes(32).toString('hex'), previousMasterKey: 'not-a-key' });
    expect(() => resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }))).toThrow(/previousMasterKey in .*secrets\.json must be 32 bytes/);
  });
});

describe('rotating the key of the secrets file', () => {
  it('stages a new key, keeps the old one as previous and everything else as it was, mode 0600', () => {
    const old = randomBytes(32).toString('hex');
    const { file } = dataDirectory({ adminToken: ADMIN_TOKEN, masterKey: old });
    const staged = stageNewMasterKey(file);
    const stored = readFile(file);
    expect(stored).toEqual({ adminToken: ADMIN_TOKEN, masterKey: staged.masterKey.toString('hex'), previousMasterKey: old });
    expect(staged.previousMasterKey.toString('hex')).toBe(old);
    expect(staged.masterKey.equals(staged.previousMasterKey)).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses to stage a second key while a rotation is under way, changing nothing', () => {
    const { file } = dataDirectory({ adminToken: ADMIN_TOKEN, masterKey: randomBytes(32).toString('hex') });
    stageNewMasterKey(file);
    const before = readFileSync(file, 'utf8');
    expect(() => stageNewMasterKey(file)).toThrow(ConfigError);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('forgets the previous key only when the file still holds the expected current key', () => {
    const { file } = dataDirectory({ adminToken: ADMIN_TOKEN, masterKey: randomBytes(32).toString('hex') });
    const staged = stageNewMasterKey(file);
    expect(() => forgetPreviousMasterKey(file, staged.previousMasterKey)).toThrow(ConfigError);
    expect(readFile(file).previousMasterKey).toBeDefined();
    expect(forgetPreviousMasterKey(file, staged.masterKey)).toBe(true);
    expect(readFile(file)).toEqual({ adminToken: ADMIN_TOKEN, masterKey: staged.masterKey.toString('hex') });
    expect(forgetPreviousMasterKey(file, staged.masterKey)).toBe(false);
  });

  it('leaves no temporary files behind', () => {
    const { dir, file } = dataDirectory({ adminToken: ADMIN_TOKEN, masterKey: randomBytes(32).toString('hex') });
    const staged = stageNewMasterKey(file);
    forgetPreviousMasterKey(file, staged.masterKey);
    expect(readFileSync(file, 'utf8')).toContain(staged.masterKey.toString('hex'));
    expect(readdirSync(dir)).toEqual(['secrets.json']);
  });
});
