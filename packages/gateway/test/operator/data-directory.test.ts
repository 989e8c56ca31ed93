/**
 * Commands other than `tms start` never create a data directory (or, for `tms admin`, an embedded
 * database): run from the wrong directory, they say where they looked instead of setting up a new,
 * empty store that an operator could then create customers in. And no command gives an existing
 * database a new master key: one restored without its secrets.json is refused until the file or
 * its key (TMS_MASTER_KEY) is back.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAdminJson, runTms } from './processes.ts';

const CONFIG_ERROR_EXIT = 78;

describe('a command run where no installation is', () => {
  const parent = mkdtempSync(join(tmpdir(), 'tms-data-directory-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it.each([
    ['admin', 'workspaces', 'list'],
    ['admin', 'workspaces', 'create', '--name', 'Shop'],
    ['migrate'],
    ['api'],
    ['worker'],
  ])('`tms %s …` refuses to create the data directory and names it', async (...args) => {
    const missing = join(parent, `missing-${args[0]}-${args.length}`);
    const result = await runTms(args, { TMS_DATA_DIR: missing, TMS_LOG_LEVEL: 'silent' });
    expect(result.code).toBe(CONFIG_ERROR_EXIT);
    expect(result.stderr).toContain(`TMS_DATA_DIR names ${missing}, which does not exist`);
    expect(result.stderr).toContain('does not create a data directory');
    expect(existsSync(missing)).toBe(false);
  });

  it('`tms admin` refuses a data directory without a database, and works once `tms migrate` made one', async () => {
    const empty = mkdtempSync(join(parent, 'empty-'));
    const refused = await runTms(['admin', 'workspaces', 'list'], { TMS_DATA_DIR: empty, TMS_LOG_LEVEL: 'silent' });
    expect(refused.code).toBe(CONFIG_ERROR_EXIT);
    expect(refused.stderr).toContain(`which holds no database (${join(empty, 'tms.sqlite')})`);
    expect(readdirSync(empty)).toEqual([]);

    const migrated = await runTms(['migrate'], { TMS_DATA_DIR: empty, TMS_LOG_LEVEL: 'silent' });
    expect(migrated.code, migrated.stderr).toBe(0);
    const listed = await runTms(['admin', 'workspaces', 'list'], { TMS_DATA_DIR: empty, TMS_LOG_LEVEL: 'silent' });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('(no workspaces)');
  });
});

describe('a database whose secrets.json is missing', () => {
  const parent = mkdtempSync(join(tmpdir(), 'tms-missing-secrets-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  /** A data directory set up by `tms migrate`, with one workspace whose sender account secret is stored under its key. */
  async function installation(): Promise<{ dir: string; secretsFile: string; secrets: string }> {
    const dir = mkdtempSync(join(parent, 'data-'));
    const env = { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent' };
    const migrated = await runTms(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const workspace = await runAdminJson(['workspaces', 'create', '--name', 'Restored'], env);
    const secretsInEnvironment = { ...env, TMS_ZNS_APP_SECRET: 'app-secret', TMS_ZNS_REFRESH_TOKEN: 'refresh-token' };
    await runAdminJson(['sender-accounts', 'connect', workspace.id, '--oa-id', 'oa-restored', '--name', 'OA', '--daily-quota', '10', '--app-id', 'app', '--secrets-env', '--no-verify'], secretsInEnvironment);
    const secretsFile = join(dir, 'secrets.json');
    return { dir, secretsFile, secrets: readFileSync(secretsFile, 'utf8') };
  }

  it.each([
    ['admin workspaces list', ['admin', 'workspaces', 'list']],
    ['migrate', ['migrate']],
    ['worker', ['worker']],
    ['start', ['start']],
  ])('`tms %s` refuses to generate a new master key for it, names the directory and the file, and says how to recover', async (_name, args) => {
    const { dir, secretsFile } = await installation();
    rmSync(secretsFile);
    const refused = await runTms(args, { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent', PORT: '0' });
    expect(refused.code).toBe(CONFIG_ERROR_EXIT);
    expect(refused.stderr).toContain(`TMS_MASTER_KEY is not set, and ${dir} holds a database (${join(dir, 'tms.sqlite')}) but it has no secrets file (${secretsFile})`);
    expect(refused.stderr).toContain('Restore secrets.json from the backup taken with the database, or set TMS_MASTER_KEY');
    expect(existsSync(secretsFile)).toBe(false);
  });

  it('works again with the key in TMS_MASTER_KEY or with secrets.json restored, and refuses a secrets.json that lacks the key', async () => {
    const { dir, secretsFile, secrets } = await installation();
    const key = JSON.parse(secrets).masterKey as string;
    rmSync(secretsFile);

    const withKey = await runTms(['admin', 'workspaces', 'list'], { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent', TMS_MASTER_KEY: key });
    expect(withKey.code, withKey.stderr).toBe(0);
    // The key the stored secret is under, so no warning that the key cannot read the store.
    expect(withKey.stderr).toBe('');
    // That run stored only a generated admin token: the file still holds no master key.
    expect(JSON.parse(readFileSync(secretsFile, 'utf8'))).not.toHaveProperty('masterKey');
    const withoutKey = await runTms(['admin', 'workspaces', 'list'], { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent' });
    expect(withoutKey.code).toBe(CONFIG_ERROR_EXIT);
    expect(withoutKey.stderr).toContain(`its secrets file ${secretsFile} holds no masterKey`);

    writeFileSync(secretsFile, secrets, { mode: 0o600 });
    const restored = await runTms(['admin', 'workspaces', 'list'], { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent' });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain('Restored');
    expect(readFileSync(secretsFile, 'utf8')).toBe(secrets);
  });
});
