// Preloaded with --import into a child process by module-loading.test.ts: when the process exits,
// it prints on standard error the npm packages it loaded through the CommonJS loader (Fastify, its
// plugins, SQLite's and PostgreSQL's drivers all load there, whether imported or required).
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

process.on('exit', () => {
  const packages = new Set();
  for (const path of Object.keys(require.cache)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
    if (match) packages.add(match[1]);
  }
  writeSync(2, `\nloaded packages: ${JSON.stringify([...packages].sort())}\n`);
});
