/**
 * What a process loads sets how long a `tms` command takes to start and how much memory a thread
 * holds for code it never runs. `tms admin` and the workers (the workers' thread of `tms start`)
 * serve no HTTP, so they must not load Fastify, its plugins or the API's routes and schemas.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, childEnvironment, runTms } from './processes.ts';

const run = promisify(execFile);
const PRELOAD = fileURLToPath(new URL('./report-loaded-packages.mjs', import.meta.url));
const PRELOAD_FLAG = `--import=${pathToFileURL(PRELOAD).href}`;
const HTTP_SERVER_PACKAGES = ['fastify', '@fastify/swagger', 'redoc'];
/** How report-loaded-packages.mjs starts its line. */
const REPORT_PREFIX = 'loaded packages: ';

/** The packages a child reported loading (see report-loaded-packages.mjs). */
function loadedPackages(stderr: string): string[] {
  const line = stderr.split('\n').find((text) => text.startsWith(REPORT_PREFIX));
  if (!line) throw new Error(`the child printed no list of loaded packages: ${stderr.slice(-500)}`);
  return JSON.parse(line.slice(REPORT_PREFIX.length)) as string[];
}

/** The packages loaded by a fresh process that imports one module of the gateway's sources. */
async function packagesLoadedByImporting(sourcePath: string): Promise<string[]> {
  const moduleUrl = new URL(`../../src/${sourcePath}`, import.meta.url).href;
  const { stderr } = await run(process.execPath, ['--import', 'tsx/esm', PRELOAD_FLAG, '--input-type=module', '-e', `await import(${JSON.stringify(moduleUrl)});`], {
    cwd: REPO_ROOT,
    env: childEnvironment({}),
    timeout: 60_000,
  });
  return loadedPackages(stderr);
}

describe('what a process without the API loads', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tms-module-loading-'));
    const migrated = await runTms(['migrate'], { TMS_DATA_DIR: dataDir, TMS_LOG_LEVEL: 'silent' });
    if (migrated.code !== 0) throw new Error(`tms migrate exited ${migrated.code}: ${migrated.stderr}`);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('tms admin opens the store without loading the HTTP server', { timeout: 60_000 }, async () => {
    const listed = await runTms(['admin', 'workspaces', 'list', '--json'], { TMS_DATA_DIR: dataDir, TMS_LOG_LEVEL: 'silent', NODE_OPTIONS: PRELOAD_FLAG });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ count: 0 });
    const packages = loadedPackages(listed.stderr);
    expect(packages).toContain('better-sqlite3');
    for (const name of HTTP_SERVER_PACKAGES) expect(packages, name).not.toContain(name);
  });

  it('the module that starts the workers loads no HTTP server, while the API app does', { timeout: 120_000 }, async () => {
    const [workers, api] = await Promise.all([packagesLoadedByImporting('main/server.ts'), packagesLoadedByImporting('http/app.ts')]);
    for (const name of HTTP_SERVER_PACKAGES) expect(workers, name).not.toContain(name);
    expect(api).toContain('fastify');
    expect(api).toContain('@fastify/swagger');
  });
});
