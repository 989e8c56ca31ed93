/**
 * The production build (`npm run build`): the gateway compiled to JavaScript runs on plain Node,
 * and `tms` (bin/tms.js) runs that build only while it matches the sources.
 *
 * The build runs on a copy of the package in a temporary directory, so the repository's own dist/
 * (which other `tms` processes may be running) is never touched. The copy's node_modules holds
 * every installed package except tsx: a compiled run that starts and serves proves it needs no
 * TypeScript loader, and a run that asks for tsx shows that `tms` chose the sources.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAMP_FILE, sourceFingerprint } from '../../scripts/build-stamp.js';
import { REPO_ROOT, childEnvironment, freePort, killAllTms, startTms } from './processes.ts';

const run = promisify(execFile);
const GATEWAY = join(REPO_ROOT, 'packages/gateway');

let root: string;
let copy: string;

/** Runs `node <script> <args>` in the copy; resolves with its exit code and output, never rejects. */
async function runNode(script: string, args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [script, ...args], { cwd: root, env: childEnvironment(env) }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tms-gateway-build-'));
  copy = join(root, 'packages/gateway');
  mkdirSync(copy, { recursive: true });
  for (const entry of ['bin', 'scripts', 'src', 'package.json', 'tsconfig.build.json']) cpSync(join(GATEWAY, entry), join(copy, entry), { recursive: true });
  cpSync(join(REPO_ROOT, 'tsconfig.json'), join(root, 'tsconfig.json'));
  mkdirSync(join(root, 'node_modules'));
  for (const entry of readdirSync(join(REPO_ROOT, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'tsx') continue;
    symlinkSync(join(REPO_ROOT, 'node_modules', entry), join(root, 'node_modules', entry));
  }
  // The build needs only TypeScript: its own script, run in the copy as `npm run build` runs it.
  const built = await runNode(join(copy, 'scripts/build.js'), []);
  // tsc reports type errors on stdout.
  expect(built.code, `${built.stdout}${built.stderr}`).toBe(0);
}, 180_000);

afterAll(async () => {
  await killAllTms();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('compiles src/ to dist/ with the SQL migrations beside the code, no tests, and a stamp of the sources it compiled', () => {
    const dist = join(copy, 'dist');
    expect(existsSync(join(dist, 'main/cli.js'))).toBe(true);
    const migrations = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.sql')).sort();
    expect(migrations(join(dist, 'store/migrations'))).toEqual(migrations(join(copy, 'src/store/migrations')));
    expect(migrations(join(dist, 'store/migrations')).length).toBeGreaterThan(0);
    const files = readdirSync(dist, { recursive: true }).map(String);
    expect(files.filter((name) => name.endsWith('.ts') || name.includes('.test.'))).toEqual([]);
    expect(JSON.parse(readFileSync(join(dist, STAMP_FILE), 'utf8')).sources).toBe(sourceFingerprint(join(copy, 'src')));
  });
});

describe('the compiled gateway', () => {
  it('migrates a new database with the copied SQL files, on plain Node without tsx', async () => {
    const dataDir = mkdtempSync(join(root, 'data-'));
    const migrated = await runNode(join(copy, 'dist/main/cli.js'), ['migrate'], { TMS_DATA_DIR: dataDir });
    expect(migrated.code, migrated.stderr).toBe(0);
    // A migration written per store (NNNN_intent.sqlite.sql and .postgres.sql) is one version, NNNN_intent.
    const files = readdirSync(join(copy, 'src/store/migrations')).filter((name) => name.endsWith('.sql'));
    const versions = [...new Set(files.map((name) => name.replace(/(\.sqlite|\.postgres)?\.sql$/, '')))].sort();
    expect(migrated.stdout.trim()).toBe(`applied: ${versions.join(', ')}`);
  });

  it('starts with `tms start` through bin/tms.js, answers /healthz and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const service = startTms(
      ['start'],
      // Nothing to send and nowhere to send it: no demo workspace, and a platform address that refuses.
      { TMS_DATA_DIR: mkdtempSync(join(root, 'data-')), PORT: String(port), TMS_DEMO_SEED: 'false', ZNS_API_URL: 'http://127.0.0.1:9', ZNS_OAUTH_URL: 'http://127.0.0.1:9' },
      join(copy, 'bin/tms.js'),
    );
    await service.waitForOutput('"msg":"tms started"');
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await service.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});

describe('bin/tms.js picks the build only while it matches the sources', () => {
  const usage = () => runNode(join(copy, 'bin/tms.js'), ['help']);
  const choseSources = (result: { code: number; stderr: string }) => result.code !== 0 && /Cannot find package 'tsx'/.test(result.stderr);

  it('runs the sources (through tsx) once a source file changes, and the build again once it is as built', async () => {
    expect(await usage()).toMatchObject({ code: 0, stdout: expect.stringContaining('tms <command>') });

    const banner = join(copy, 'src/main/banner.ts');
    const original = readFileSync(banner, 'utf8');
    writeFileSync(banner, `${original}\n// edited after the build\n`);
    expect(choseSources(await usage())).toBe(true);
    writeFileSync(banner, original);
    expect((await usage()).code).toBe(0);
  });

  it('runs the sources when a source file is added, and ignores edits to unit tests (the build does not compile them)', async () => {
    const added = join(copy, 'src/lib/added-after-build.ts');
    writeFileSync(added, 'export const later = 1;\n');
    expect(choseSources(await usage())).toBe(true);
    rmSync(added);

    const unitTest = join(copy, 'src/lib/added-after-build.test.ts');
    writeFileSync(unitTest, 'export {};\n');
    expect((await usage()).code).toBe(0);
    rmSync(unitTest);
  });

  it('runs the sources when the build has no stamp (an interrupted build)', async () => {
    const stamp = join(copy, 'dist', STAMP_FILE);
    const saved = readFileSync(stamp);
    rmSync(stamp);
    expect(choseSources(await usage())).toBe(true);
    writeFileSync(stamp, saved);
    expect((await usage()).code).toBe(0);
  });
});
