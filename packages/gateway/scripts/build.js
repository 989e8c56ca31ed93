#!/usr/bin/env node
// `npm run build -w @tms/gateway`: compiles src/ to JavaScript in dist/ (tsconfig.build.json),
// copies the files the runtime reads beside the code (SQL migrations and any other non-TypeScript
// file under src/), and writes dist/build-stamp.json last. bin/tms.js runs dist/ only when that
// stamp matches the sources (see build-stamp.js), so a stale or half-written build is never run.
//
//   node scripts/build.js [--out-dir DIR]     (default: dist/ beside src/)
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { STAMP_FILE, buildInputs, sourceFingerprint } from './build-stamp.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = join(packageDir, 'src');
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
const outDir = resolve(values['out-dir'] ?? join(packageDir, 'dist'));

// The stamp goes first, so a `tms` starting during the build runs the sources, not a partial dist/.
rmSync(join(outDir, STAMP_FILE), { force: true });
// A clean slate: files of deleted sources must not survive in the build.
rmSync(outDir, { recursive: true, force: true });

const fingerprint = sourceFingerprint(sourceDir);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error('tms build: tsc failed; dist/ has no build stamp, so `tms` keeps running the sources');
  process.exit(1);
}

const assets = buildInputs(sourceDir).filter((path) => !path.endsWith('.ts'));
for (const asset of assets) {
  mkdirSync(dirname(join(outDir, asset)), { recursive: true });
  copyFileSync(join(sourceDir, asset), join(outDir, asset));
}

if (sourceFingerprint(sourceDir) !== fingerprint) {
  console.error('tms build: src/ changed while it was being compiled; run the build again');
  process.exit(1);
}
writeFileSync(join(outDir, STAMP_FILE), `${JSON.stringify({ sources: fingerprint, built_at: new Date().toISOString() }, null, 2)}\n`);
console.log(`tms build: ${outDir} (${assets.length} asset${assets.length === 1 ? '' : 's'} copied)`);
