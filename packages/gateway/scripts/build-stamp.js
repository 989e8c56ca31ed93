// Which code `tms` runs: the compiled JavaScript in dist/ only when it was built from exactly the
// sources now in src/, otherwise the TypeScript sources through tsx. The build records a digest of
// its inputs (relative paths and contents of every file under src/ except unit tests) in
// dist/build-stamp.json; a start compares it with the digest of src/ as it is now. Contents, not
// modification times, so an edit, an added or deleted file, or a checkout of another branch all
// count, whatever the clock or the file times say.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP_FILE = 'build-stamp.json';

/** Unit tests sit beside the code; the build neither compiles nor copies them. */
export function isBuildInput(fileName) {
  return !fileName.endsWith('.test.ts');
}

/** Relative paths (with `/`) of the build inputs under `sourceDir`, sorted. */
export function buildInputs(sourceDir) {
  const found = [];
  const walk = (relativeDir) => {
    for (const entry of readdirSync(join(sourceDir, relativeDir), { withFileTypes: true })) {
      const relativePath = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) walk(relativePath);
      else if (entry.isFile() && isBuildInput(entry.name)) found.push(relativePath);
    }
  };
  walk('');
  return found.sort();
}

/** SHA-256 over every build input's path and contents. */
export function sourceFingerprint(sourceDir) {
  const hash = createHash('sha256');
  for (const relativePath of buildInputs(sourceDir)) {
    const contents = readFileSync(join(sourceDir, relativePath));
    // Length-prefixed, so no two different trees can produce the same byte stream.
    hash.update(`${relativePath}\0${contents.length}\0`).update(contents);
  }
  return hash.digest('hex');
}

function readStamp(outDir) {
  try {
    const stamp = JSON.parse(readFileSync(join(outDir, STAMP_FILE), 'utf8'));
    return typeof stamp?.sources === 'string' ? stamp : null;
  } catch {
    return null;
  }
}

/**
 * The entry point `tms` should run for the package in `packageDir`:
 * - `compiled` (dist/main/cli.js) when dist/ was built from the current src/, or when there is no
 *   src/ at all (a deployment that ships the build only);
 * - `source` (src/main/cli.ts, needs tsx) otherwise: no build, an interrupted build, or sources
 *   changed since the build. `reason` says which, for diagnostics.
 */
export function chooseEntry(packageDir) {
  const sourceDir = join(packageDir, 'src');
  const outDir = join(packageDir, 'dist');
  const compiled = { kind: 'compiled', path: join(outDir, 'main', 'cli.js') };
  const source = (reason) => ({ kind: 'source', path: join(sourceDir, 'main', 'cli.ts'), reason });
  if (!existsSync(sourceDir)) return compiled;
  if (!existsSync(compiled.path)) return source('no build in dist/');
  const stamp = readStamp(outDir);
  if (stamp === null) return source(`dist/ has no valid ${STAMP_FILE} (an interrupted or foreign build)`);
  if (stamp.sources !== sourceFingerprint(sourceDir)) return source('src/ changed since the build');
  return compiled;
}
