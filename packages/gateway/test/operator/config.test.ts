/**
 * Configuration: parsed once from the environment; a bad value stops start-up with a message
 * naming the variable. Embedded secrets: generated into the data directory with mode 0600.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/config.ts';
import { configErrorOf } from './config-refusal.ts';
import { resolveSecrets } from '../../src/config/secrets.ts';
import { runTms } from './processes.ts';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tms-config-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

const ADMIN_TOKEN = 'operator-token-0123456789';
const MASTER_KEY_HEX = 'ab'.repeat(32);

describe('parseConfig', () => {
  it('has working defaults for an empty environment: embedded SQLite in ./.tms, port 3000, loopback', () => {
    const config = parseConfig({});
    expect(config.dataDir).toBe(resolve('.tms'));
    expect(config.database).toEqual({ kind: 'sqlite', file: resolve('.tms', 'tms.sqlite') });
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(3000);
    expect(config.adminToken).toBeNull();
    expect(config.masterKey).toBeNull();
    expect(config.rateLimit).toEqual({ perSecond: 50, burst: 100 });
    expect(config.authCacheMs).toBeGreaterThan(0);
    expect(config.authCacheMs).toBeLessThanOrEqual(5000);
    expect(config.logLevel).toBe('info');
    expect(config.accessLog).toBe(false);
    expect(config.demoSeed).toBe(true);
    expect(config.allowPrivateWebhookTargets).toBe(false);
    expect(config.platformQuota).toEqual({ cacheMs: 30_000, retryMs: 5_000 });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.rateLimit)).toBe(true);
  });

  it('reads every variable it is given', () => {
    const dir = tempDir();
    const config = parseConfig({
      TMS_DATA_DIR: dir,
      PORT: '8080',
      HOST: '0.0.0.0',
      TMS_ADMIN_TOKEN: ADMIN_TOKEN,
      TMS_MASTER_KEY: MASTER_KEY_HEX,
      TMS_RATE_LIMIT_PER_SECOND: '200',
      TMS_RATE_LIMIT_BURST: '400',
      TMS_AUTH_CACHE_MS: '0',
      TMS_LOG_LEVEL: 'warn',
      TMS_ACCESS_LOG: 'yes',
      TMS_DEMO_SEED: 'false',
      TMS_WEBHOOK_ALLOW_PRIVATE: 'TRUE',
      TMS_PLATFORM_QUOTA_CACHE_MS: '0',
      TMS_PLATFORM_QUOTA_RETRY_MS: '1000',
      TMS_DISPATCH_UNCONFIRMED_GRACE_MS: '60000',
      TMS_DELIVERY_CHECK_AFTER_MS: '0',
    });
    expect(config).toMatchObject({
      dataDir: dir,
      database: { kind: 'sqlite', file: join(dir, 'tms.sqlite') },
      port: 8080,
      host: '0.0.0.0',
      adminToken: ADMIN_TOKEN,
      rateLimit: { perSecond: 200, burst: 400 },
      authCacheMs: 0,
      logLevel: 'warn',
      accessLog: true,
      demoSeed: false,
      allowPrivateWebhookTargets: true,
      platformQuota: { cacheMs: 0, retryMs: 1000 },
      dispatch: { unconfirmedGraceMs: 60_000 },
      deliveryCheckAfterMs: 0,
    });
    expect(config.masterKey).toEqual(Buffer.from(MASTER_KEY_HEX, 'hex'));
  });

  it('accepts the master key as base64 too', () => {
    const key = randomBytes(32);
    expect(parseConfig({ TMS_MASTER_KEY: key.toString('base64') }).masterKey).toEqual(key);
  });

  it('takes PostgreSQL from DATABASE_URL with both secrets', () => {
    const url = 'postgres://tms:pw@db.internal:5432/tms';
    const config = parseConfig({ DATABASE_URL: url, TMS_ADMIN_TOKEN: ADMIN_TOKEN, TMS_MASTER_KEY: MASTER_KEY_HEX, TMS_PG_POOL_SIZE: '25' });
    expect(config.database).toEqual({ kind: 'postgres', url, poolSize: 25, preparedStatements: true });
    expect(parseConfig({ DATABASE_URL: 'postgresql://x/y', TMS_ADMIN_TOKEN: ADMIN_TOKEN, TMS_MASTER_KEY: MASTER_KEY_HEX }).database.kind).toBe('postgres');
  });

  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '-1' }],
    ['PORT', { PORT: '80.5' }],
    ['TMS_RATE_LIMIT_PER_SECOND', { TMS_RATE_LIMIT_PER_SECOND: 'fast' }],
    ['TMS_RATE_LIMIT_PER_SECOND', { TMS_RATE_LIMIT_PER_SECOND: '0' }],
    ['TMS_RATE_LIMIT_BURST', { TMS_RATE_LIMIT_BURST: '1e3' }],
    ['TMS_AUTH_CACHE_MS', { TMS_AUTH_CACHE_MS: '60000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['DATABASE_URL', { DATABASE_URL: 'localhost:5432/tms' }],
    ['TMS_ADMIN_TOKEN', { TMS_ADMIN_TOKEN: 'short' }],
    ['TMS_MASTER_KEY', { TMS_MASTER_KEY: 'not-a-key' }],
    ['TMS_MASTER_KEY', { TMS_MASTER_KEY: 'ab'.repeat(31) }],
    ['TMS_MASTER_KEY', { TMS_MASTER_KEY: randomBytes(16).toString('base64') }],
    ['TMS_LOG_LEVEL', { TMS_LOG_LEVEL: 'verbose' }],
    ['TMS_DEMO_SEED', { TMS_DEMO_SEED: 'maybe' }],
    ['TMS_WEBHOOK_ALLOW_PRIVATE', { TMS_WEBHOOK_ALLOW_PRIVATE: '2' }],
    ['TMS_ACCESS_LOG', { TMS_ACCESS_LOG: 'loud' }],
    ['TMS_PLATFORM_QUOTA_CACHE_MS', { TMS_PLATFORM_QUOTA_CACHE_MS: '-1' }],
    ['TMS_PLATFORM_QUOTA_RETRY_MS', { TMS_PLATFORM_QUOTA_RETRY_MS: '0' }],
    ['TMS_DISPATCH_UNCONFIRMED_GRACE_MS', { TMS_DISPATCH_UNCONFIRMED_GRACE_MS: '-5' }],
    ['TMS_DELIVERY_CHECK_AFTER_MS', { TMS_DELIVERY_CHECK_AFTER_MS: 'soon' }],
    ['TMS_PG_POOL_SIZE', { DATABASE_URL: 'postgres://x/y', TMS_ADMIN_TOKEN: ADMIN_TOKEN, TMS_MASTER_KEY: MASTER_KEY_HEX, TMS_PG_POOL_SIZE: '0' }],
  ])('refuses a bad %s (%j) with a ConfigError naming it', (variable, env) => {
    const error = configErrorOf(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(variable);
  });

  it('quotes the bad value back to the operator', () => {
    expect(configErrorOf({ PORT: 'abc' }).message).toContain('abc');
    expect(configErrorOf({ PORT: '70000' }).message).toContain('70000');
    expect(configErrorOf({ TMS_LOG_LEVEL: 'verbose' }).message).toContain('verbose');
  });

  it('does not echo a bad secret back', () => {
    expect(configErrorOf({ TMS_ADMIN_TOKEN: 'tooshort-secret' }).message).not.toContain('tooshort-secret');
    expect(configErrorOf({ TMS_MASTER_KEY: 'wrong-master-key' }).message).not.toContain('wrong-master-key');
  });

  it('requires TMS_ADMIN_TOKEN and TMS_MASTER_KEY with DATABASE_URL', () => {
    const url = 'postgres://tms@db/tms';
    const noToken = configErrorOf({ DATABASE_URL: url, TMS_MASTER_KEY: MASTER_KEY_HEX });
    expect(noToken.variable).toBe('TMS_ADMIN_TOKEN');
    expect(noToken.message).toMatch(/TMS_ADMIN_TOKEN.*DATABASE_URL/);
    const noKey = configErrorOf({ DATABASE_URL: url, TMS_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(noKey.variable).toBe('TMS_MASTER_KEY');
    expect(noKey.message).toMatch(/TMS_MASTER_KEY.*DATABASE_URL/);
    expect(configErrorOf({ DATABASE_URL: url }).message).toMatch(/TMS_ADMIN_TOKEN|TMS_MASTER_KEY/);
  });
});

describe('tms start with a bad variable', () => {
  it('exits 78 with a message naming PORT, and starts nothing', async () => {
    const dir = tempDir();
    const result = await runTms(['start'], { TMS_DATA_DIR: dir, PORT: 'abc' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PORT');
    expect(result.stderr).toContain('abc');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).not.toContain('listening');
    expect(existsSync(join(dir, 'tms.sqlite'))).toBe(false);
  });

  it('exits 78 naming TMS_MASTER_KEY when DATABASE_URL is set without it', async () => {
    const result = await runTms(['start'], { TMS_DATA_DIR: tempDir(), DATABASE_URL: 'postgres://tms@127.0.0.1:1/tms', TMS_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('TMS_MASTER_KEY');
  });
});

describe('resolveSecrets', () => {
  const mode = (file: string) => statSync(file).mode & 0o777;

  it('generates both secrets into <data dir>/secrets.json with mode 0600 and says which', () => {
    const dir = join(tempDir(), 'fresh', 'data');
    const resolved = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }));
    const file = join(dir, 'secrets.json');
    expect(resolved.file).toBe(file);
    expect(resolved.generated.sort()).toEqual(['TMS_ADMIN_TOKEN', 'TMS_MASTER_KEY']);
    expect(mode(file)).toBe(0o600);
    expect(mode(dir) & 0o077).toBe(0);
    expect(resolved.config.adminToken).toMatch(/^\S{16,}$/);
    expect(resolved.config.masterKey).toHaveLength(32);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.adminToken).toBe(resolved.config.adminToken);
    expect(Buffer.from(stored.masterKey, 'hex')).toEqual(resolved.config.masterKey);
    expect(Object.isFrozen(resolved.config)).toBe(true);
  });

  it('reuses the stored secrets on the next start and generates nothing', () => {
    const dir = tempDir();
    const first = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }));
    const before = readFileSync(join(dir, 'secrets.json'), 'utf8');
    const second = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }));
    expect(second.generated).toEqual([]);
    expect(second.config.adminToken).toBe(first.config.adminToken);
    expect(second.config.masterKey).toEqual(first.config.masterKey);
    expect(readFileSync(join(dir, 'secrets.json'), 'utf8')).toBe(before);
    expect(mode(join(dir, 'secrets.json'))).toBe(0o600);
  });

  it('lets values from the environment win over the stored ones', () => {
    const dir = tempDir();
    const stored = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }));
    const fromEnv = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_ADMIN_TOKEN: ADMIN_TOKEN, TMS_MASTER_KEY: MASTER_KEY_HEX }));
    expect(fromEnv.config.adminToken).toBe(ADMIN_TOKEN);
    expect(fromEnv.config.masterKey).toEqual(Buffer.from(MASTER_KEY_HEX, 'hex'));
    expect(fromEnv.generated).toEqual([]);
    const tokenOnly = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_ADMIN_TOKEN: ADMIN_TOKEN }));
    expect(tokenOnly.config.adminToken).toBe(ADMIN_TOKEN);
    expect(tokenOnly.config.masterKey).toEqual(stored.config.masterKey);
    expect(tokenOnly.generated).toEqual([]);
  });

  it('writes nothing when both secrets come from the environment', () => {
    const dir = tempDir();
    const resolved = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_ADMIN_TOKEN: ADMIN_TOKEN, TMS_MASTER_KEY: MASTER_KEY_HEX }));
    expect(resolved).toMatchObject({ generated: [], file: null });
    expect(existsSync(join(dir, 'secrets.json'))).toBe(false);
  });

  it('generates only what the environment does not give', () => {
    const dir = tempDir();
    const resolved = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_ADMIN_TOKEN: ADMIN_TOKEN }));
    expect(resolved.config.adminToken).toBe(ADMIN_TOKEN);
    expect(resolved.config.masterKey).toHaveLength(32);
    expect(resolved.generated).toEqual(['TMS_MASTER_KEY']);
    expect(mode(join(dir, 'secrets.json'))).toBe(0o600);
    const again = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_ADMIN_TOKEN: ADMIN_TOKEN }));
    expect(again.generated).toEqual([]);
    expect(again.config.masterKey).toEqual(resolved.config.masterKey);
  });

  it('agrees on one set of secrets when several processes start on a new directory at once', async () => {
    const dir = tempDir();
    const script = `import { resolveSecrets } from ${JSON.stringify(resolve('packages/gateway/src/config/secrets.ts'))};
import { parseConfig } from ${JSON.stringify(resolve('packages/gateway/src/config/config.ts'))};
const resolved = resolveSecrets(parseConfig({ TMS_DATA_DIR: ${JSON.stringify(dir)} }));
console.log(JSON.stringify({ token: resolved.config.adminToken, key: resolved.config.masterKey.toString('hex') }));`;
    const runs = await Promise.all(
      Array.from({ length: 6 }, () =>
        new Promise<string>((done, fail) =>
          execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], (error, stdout) => (error ? fail(error) : done(stdout.trim()))),
        ),
      ),
    );
    expect(new Set(runs).size).toBe(1);
    const stored = JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8'));
    expect(JSON.parse(runs[0]!)).toEqual({ token: stored.adminToken, key: stored.masterKey });
    expect(mode(join(dir, 'secrets.json'))).toBe(0o600);
  });

  it('says which secrets file is broken instead of crashing', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'secrets.json'), '{ not json', { mode: 0o600 });
    expect(() => resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }))).toThrow(ConfigError);
    expect(() => resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }))).toThrow(/secrets\.json is not a valid secrets file/);
  });

  it('marks the admin token as printable only when it lives in the secrets file', () => {
    const dir = tempDir();
    expect(resolveSecrets(parseConfig({ TMS_DATA_DIR: dir })).adminTokenFromFile).toBe(true);
    expect(resolveSecrets(parseConfig({ TMS_DATA_DIR: dir, TMS_ADMIN_TOKEN: ADMIN_TOKEN })).adminTokenFromFile).toBe(false);
  });

  it('fills in a missing secret of a stored file and keeps the other', () => {
    const dir = tempDir();
    const masterKey = randomBytes(32).toString('hex');
    writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ masterKey }), { mode: 0o600 });
    const resolved = resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }));
    expect(resolved.generated).toEqual(['TMS_ADMIN_TOKEN']);
    expect(resolved.config.masterKey).toEqual(Buffer.from(masterKey, 'hex'));
    expect(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8'))).toEqual({ masterKey, adminToken: resolved.config.adminToken });
  });

  it('names the file when its stored master key is bad', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ adminToken: ADMIN_TOKEN, masterKey: 'broken' }), { mode: 0o600 });
    expect(() => resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }))).toThrow(ConfigError);
    expect(() => resolveSecrets(parseConfig({ TMS_DATA_DIR: dir }))).toThrow(/secrets\.json/);
  });
});
