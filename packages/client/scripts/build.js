#!/usr/bin/env node
// `npm run build -w @tms/client` (also run by `npm pack` through prepack): ESM JavaScript and type
// declarations in dist/. First it writes src/version.ts from package.json's "version", so the
// User-Agent of every request names the version that is being built: package.json stays the one
// place a version is set, and the SDK reads it without a JSON import (which not every bundler or
// edge runtime accepts) and without node: modules.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));

const versionFile = join(packageDir, 'src/version.ts');
if (!/^[0-9A-Za-z.+-]+$/.test(version)) throw new Error(`package.json: "version" ${JSON.stringify(version)} is not a semver version`);
const versionSource = `// Written by scripts/build.js from package.json's "version"; change the version there, not here.\nexport const SDK_VERSION = '${version}';\n`;
// Rewritten only when the version changed, so a build leaves the working tree as it was.
if (!existsSync(versionFile) || readFileSync(versionFile, 'utf8') !== versionSource) writeFileSync(versionFile, versionSource);

// A clean slate: files of deleted sources must not end up in the package.
rmSync(join(packageDir, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.json')], { stdio: 'inherit' });
process.exitCode = compiled.status ?? 1;
