// Preloaded with --import into a child process by module-loading.test.ts: when the process exits,
// it prints on standard error the files of npm packages it loaded through the CommonJS loader
// (Fastify, its plugins, undici, SQLite's and PostgreSQL's drivers all load there, whether
// imported or required), as paths inside node_modules.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

process.on('exit', () => {
  const modules = new Set();
  for (const path of Object.keys(require.cache)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+\/.*)$/.exec(path);
    if (match) modules.add(match[1]);
  }
  writeSync(2, `\nloaded modules: ${JSON.stringify([...modules].sort())}\n`);
});
