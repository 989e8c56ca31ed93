/** `npm run docs:config`: rewrites the README's configuration table from the configuration schema. */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_TABLE_FILE, withConfigurationTable } from '../config/config-table.ts';

const target = fileURLToPath(new URL(`../../../../${CONFIG_TABLE_FILE}`, import.meta.url));
writeFileSync(target, withConfigurationTable(readFileSync(target, 'utf8')));
console.log(`wrote the configuration table of ${CONFIG_TABLE_FILE}`);
