/**
 * The README's configuration table is generated from the configuration schema
 * (`npm run docs:config`); this fails when someone changes one without the other.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_TABLE_FILE, withConfigurationTable } from '../../src/config/config-table.ts';
import { CONFIG_VARIABLES } from '../../src/config/variables.ts';

const readme = readFileSync(new URL(`../../../../${CONFIG_TABLE_FILE}`, import.meta.url), 'utf8');

describe(`${CONFIG_TABLE_FILE} configuration table`, () => {
  it('matches the configuration schema', () => {
    expect(readme === withConfigurationTable(readme), `${CONFIG_TABLE_FILE} is out of date: run \`npm run docs:config\` and commit the result`).toBe(true);
  });

  it.each(Object.keys(CONFIG_VARIABLES))('has a row for %s', (name) => {
    expect(readme).toContain(`| \`${name}\` |`);
  });

  it('refuses a README without the table markers instead of appending a table somewhere', () => {
    expect(() => withConfigurationTable('# TMS\n\nno table here\n')).toThrow(/config-table:start/);
  });
});
