/**
 * What a process loads sets how long a `tms` command takes to start and how much memory a thread
 * holds for code it never runs. `tms admin` and the workers (the workers' thread of `tms start`)
 * serve no HTTP, so they must not load Fastify, its plugins or the API's routes and schemas; a
 * process on SQLite must not load the PostgreSQL driver; and the HTTP client is undici's Agent
 * alone, without the rest of undici (fetch, WebSocket, caches), loaded by the first request that
 * goes out, so that a thread that sends none (the API's, mostly) never holds it.
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

/** What a fresh process loads that imports one module of the gateway's sources (as `gateway`) and runs `then` after. */
async function loadedByImporting(sourcePath: string, then = ''): Promise<Loaded> {
  const moduleUrl = new URL(`../../src/${sourcePath}`, import.meta.url).href;
  const script = `const gateway = await import(${JSON.stringify(moduleUrl)});\n${then}`;
  const { stderr } = await run(process.execPath, ['--import', 'tsx/esm', PRELOAD_FLAG, '--input-type=module', '-e', script], {
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
    // Both send HTTP requests through undici's Agent, loaded by the first request, not before.
    for (const loaded of [workers, api]) {
      expect(loaded.packages).not.toContain('undici');
      expect(loaded.packages).not.toContain('pg');
    }
  });

  it("the first request that goes out loads undici's Agent, without the rest of undici", { timeout: 60_000 }, async () => {
    const sendOne = `
      const { createServer } = await import('node:http');
      const server = createServer((request, response) => response.end('ok'));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const agent = new gateway.OnDemandAgent({});
      const answered = await new Promise((resolve, reject) => agent.dispatch(
        { origin: 'http://127.0.0.1:' + server.address().port, path: '/', method: 'GET' },
        { onRequestStart() {}, onResponseStart(controller, statusCode) { this.statusCode = statusCode; }, onResponseData() {}, onResponseEnd() { resolve(this.statusCode); }, onResponseError(controller, error) { reject(error); } },
      ));
      if (answered !== 200) throw new Error('answered ' + answered);
      await agent.close();
      server.close();`;
    const [idle, sent] = await Promise.all([loadedByImporting('lib/http-agent.ts'), loadedByImporting('lib/http-agent.ts', sendOne)]);
    expect(idle.packages).not.toContain('undici');
    expect(sent.modules).toContain('undici/lib/dispatcher/agent.js');
    expect(sent.modules).not.toContain(UNDICI_FETCH);
  });
});
