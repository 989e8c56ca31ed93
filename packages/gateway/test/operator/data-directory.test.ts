/**
 * Commands other than `tms start` never create a data directory (or, for `tms admin`, an embedded
 * database): run from the wrong directory, they say where they looked instead of setting up a new,
 * empty store that an operator could then create customers in.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTms } from './processes.ts';

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
