/**
 * What a process loads sets how long a `tms` command takes to start and how much memory a thread
 * holds for code it never runs. `tms admin` and the workers (the workers' thread of `tms start`)
 * serve no HTTP, so they must not load Fastify, its plugins or the API's routes and schemas; a
 * process on SQLite must not load the PostgreSQL driver; and the HTTP client is undici's Agent
 * alone, without the rest of undici (fetch, WebSocket, caches).
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
const PRELOAD = fileURLToPath(new URL('./report-loaded-modules.mjs', import.meta.url));
const PRELOAD_FLAG = `--import=${pathToFileURL(PRELOAD).href}`;
const HTTP_SERVER_PACKAGES = ['fastify', '@fastify/swagger', 'redoc'];
/** undici's fetch, the largest part of undici the gateway does not use. */
const UNDICI_FETCH = 'undici/lib/web/fetch/index.js';
/** How report-loaded-modules.mjs starts its line. */
const REPORT_PREFIX = 'loaded modules: ';

interface Loaded {
  /** Package names, scoped ones with their scope. */
  packages: string[];
  /** Files, as paths inside node_modules. */
  modules: string[];
}

/** What a child reported loading (see report-loaded-modules.mjs). */
function loadedBy(stderr: string): Loaded {
  const line = stderr.split('\n').find((text) => text.startsWith(REPORT_PREFIX));
  if (!line) throw new Error(`the child printed no list of loaded modules: ${stderr.slice(-500)}`);
  const modules = JSON.parse(line.slice(REPORT_PREFIX.length)) as string[];
  const packages = new Set(modules.map((path) => /^((?:@[^/]+\/)?[^/]+)\//.exec(path)![1]!));
  return { packages: [...packages], modules };
}

/** What a fresh process loads that imports one module of the gateway's sources. */
async function loadedByImporting(sourcePath: string): Promise<Loaded> {
  const moduleUrl = new URL(`../../src/${sourcePath}`, import.meta.url).href;
  const { stderr } = await run(process.execPath, ['--import', 'tsx/esm', PRELOAD_FLAG, '--input-type=module', '-e', `await import(${JSON.stringify(moduleUrl)});`], {
    cwd: REPO_ROOT,
    env: childEnvironment({}),
    timeout: 60_000,
  });
  return loadedBy(stderr);
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
    const { packages } = loadedBy(listed.stderr);
    expect(packages).toContain('better-sqlite3');
    expect(packages).not.toContain('pg');
    for (const name of HTTP_SERVER_PACKAGES) expect(packages, name).not.toContain(name);
  });

  it('the module that starts the workers loads no HTTP server, while the API app does', { timeout: 120_000 }, async () => {
    const [workers, api] = await Promise.all([loadedByImporting('main/server.ts'), loadedByImporting('http/app.ts')]);
    for (const name of HTTP_SERVER_PACKAGES) expect(workers.packages, name).not.toContain(name);
    expect(api.packages).toContain('fastify');
    expect(api.packages).toContain('@fastify/swagger');
    // Both send HTTP requests through undici's Agent, and neither loads the rest of undici.
    for (const loaded of [workers, api]) {
      expect(loaded.modules).toContain('undici/lib/dispatcher/agent.js');
      expect(loaded.modules).not.toContain(UNDICI_FETCH);
      expect(loaded.packages).not.toContain('pg');
    }
  });
});
