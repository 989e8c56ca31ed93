#!/usr/bin/env node
// The `tms` command. It runs the compiled JavaScript of `npm run build` (dist/main/cli.js) when that
// build was made from exactly the sources now in src/; otherwise (a fresh clone, or sources edited
// since the build) it runs the TypeScript sources through the tsx loader, so development needs no
// build step and a stale build is never run. The rule is in scripts/build-stamp.js.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chooseEntry } from '../scripts/build-stamp.js';

const entry = chooseEntry(fileURLToPath(new URL('..', import.meta.url)));
if (entry.kind === 'source') {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(pathToFileURL(entry.path).href);
