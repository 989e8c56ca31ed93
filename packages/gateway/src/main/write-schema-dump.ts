/**
 * `npm run db:schema`: writes the schema dumps (src/store/schema.sqlite.sql and
 * schema.postgres.sql) from new, temporary databases migrated to the latest version.
 *
 *   write-schema-dump.ts --postgres-url URL   (a server whose user may create databases)
 *
 * The npm script passes TMS_TEST_DATABASE_URL, or the local server, as the URL.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { SCHEMA_DUMP_FILES, dumpFreshSchema } from '../store/schema-dump.ts';

const { values } = parseArgs({ options: { 'postgres-url': { type: 'string' } } });
const postgresAdminUrl = values['postgres-url'];
if (!postgresAdminUrl) {
  console.error('usage: write-schema-dump.ts --postgres-url postgres://user@host:port/database');
  process.exit(2);
}

// Both dumps are made before either is written, so a failure (no PostgreSQL) leaves no half-updated pair.
const dumps = { sqlite: await dumpFreshSchema('sqlite'), postgres: await dumpFreshSchema('postgres', { postgresAdminUrl }) };
for (const dialect of ['sqlite', 'postgres'] as const) {
  writeFileSync(SCHEMA_DUMP_FILES[dialect], dumps[dialect]);
  console.log(`wrote ${relative(process.cwd(), SCHEMA_DUMP_FILES[dialect])}`);
}
