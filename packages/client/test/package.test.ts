/**
 * The package as an integrator gets it: `npm pack` of packages/client (its prepack builds dist/),
 * installed from the tarball into an empty project, then used from plain Node (no tsx, no
 * workspace) against the real gateway. A recording proxy in front of the gateway shows the
 * User-Agent of what the installed SDK and CLI send.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultyProxy, type FaultyProxy } from './faulty-proxy.ts';
import { REPO_ROOT, otpTemplate, startStack, stopAll, type Stack, type Workspace } from './harness.ts';

const run = promisify(execFile);
const PACKAGE_DIR = join(REPO_ROOT, 'packages/client');
const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).version;

let work: string;
let project: string;
let installed: string;
let stack: Stack;
let workspace: Workspace;
let proxy: FaultyProxy;

/**
 * The parent's environment for npm and the installed code: the test's own node first on PATH, and
 * no npm_* variables (set when the suite runs under `npm test`), so npm sees a plain shell.
 */
function shellEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.toLowerCase().startsWith('npm_') && !name.startsWith('TMS_')) env[name] = value;
  }
  env.PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

function npm(args: string[], cwd: string) {
  return run('npm', args, { cwd, env: shellEnvironment() });
}

beforeAll(async () => {
  // The gateway starts while npm packs and installs: both take seconds.
  const stackStarted = startStack({ oas: [{ n: 1, dailyQuota: 1000 }] });

  work = mkdtempSync(join(tmpdir(), 'tms-client-install-'));
  await npm(['pack', PACKAGE_DIR, '--pack-destination', work], REPO_ROOT);
  const [tarball] = readdirSync(work).filter((name) => name.endsWith('.tgz'));
  expect(tarball).toBe(`tms-client-${VERSION}.tgz`);

  project = join(work, 'project');
  mkdirSync(project);
  await npm(['init', '-y'], project);
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ ...manifest, type: 'module' }, null, 2));
  // No runtime dependencies: the tarball alone installs, without the registry.
  await npm(['install', '--offline', '--no-audit', '--no-fund', join(work, tarball!)], project);
  installed = join(project, 'node_modules/@tms/client');

  stack = await stackStarted;
  workspace = await stack.provision({ oas: [{ n: 1, dailyQuota: 1000 }] });
  proxy = await startFaultyProxy(stack.gatewayUrl);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.close();
  await stopAll();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the licence, the README, the CLI and built JavaScript with declarations; no sources or tests', () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@tms/client', version: VERSION, license: 'MIT', type: 'module' });
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toContain('MIT License');
    expect(existsSync(join(installed, 'README.md'))).toBe(true);
    expect(existsSync(join(installed, manifest.exports['.'].default))).toBe(true);
    expect(readFileSync(join(installed, manifest.exports['.'].types), 'utf8')).toContain('export');
    expect(existsSync(join(installed, 'src'))).toBe(false);
    const shipped = readdirSync(join(installed, 'dist'), { recursive: true }).map(String);
    expect(shipped.filter((name) => name.includes('.test.'))).toEqual([]);
  });

  it('imports no Node module outside the CLI, so the SDK runs on edge runtimes', () => {
    const core = readdirSync(join(installed, 'dist')).filter((name) => name.endsWith('.js'));
    expect(core).toContain('index.js');
    for (const file of core) {
      expect(readFileSync(join(installed, 'dist', file), 'utf8'), file).not.toMatch(/from ["']node:|import\(["']node:|require\(/);
    }
  });

  it('works from plain Node: a real send whose requests name the SDK and its version in User-Agent', async () => {
    writeFileSync(
      join(project, 'send.js'),
      `import { Client, TmsError, verifyWebhook, signWebhook } from '@tms/client';
const tms = new Client({ apiKey: process.env.TMS_API_KEY, baseUrl: process.env.TMS_BASE_URL });
const { templates } = await tms.templates.list();
const { msg_id } = await tms.messages.send({ template_id: ${JSON.stringify(otpTemplate(1))}, phone: '0912345678', template_data: { otp: '123456' } });
const record = await tms.messages.get(msg_id);
const verified = await verifyWebhook('{"a":1}', await signWebhook('{"a":1}', 'k'), 'k');
console.log(JSON.stringify({ templates: templates.length, msg_id: record.msg_id, verified, tmsError: typeof TmsError }));
`,
    );
    proxy.reset();
    const { stdout } = await run(process.execPath, ['send.js'], { cwd: project, env: shellEnvironment({ TMS_API_KEY: workspace.apiKey, TMS_BASE_URL: proxy.url }) });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ templates: 2, msg_id: expect.stringMatching(/\S/), verified: true, tmsError: 'function' });

    expect(proxy.seen.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /api/v1/templates',
      'POST /api/v1/messages/send',
      `GET /api/v1/messages/${result.msg_id}`,
    ]);
    for (const request of proxy.seen) expect(request.headers['user-agent']).toBe(`tms-client-js/${VERSION} (node v${process.versions.node})`);
  });

  it('runs the tms-client command through npx, and its requests carry the same User-Agent', async () => {
    const help = await run('npx', ['--no-install', 'tms-client', '--help'], { cwd: project, env: shellEnvironment() });
    expect(help.stdout).toContain('Usage: tms-client <command>');

    proxy.reset();
    const templates = await run('npx', ['--no-install', 'tms-client', 'templates', '--json'], {
      cwd: project,
      env: shellEnvironment({ TMS_API_KEY: workspace.apiKey, TMS_BASE_URL: proxy.url }),
    });
    expect(JSON.parse(templates.stdout).templates.map((template: { template_id: string }) => template.template_id)).toContain(otpTemplate(1));
    expect(proxy.seen.length).toBeGreaterThan(0);
    for (const request of proxy.seen) expect(request.headers['user-agent']).toMatch(new RegExp(`^tms-client-js/${VERSION.replaceAll('.', '\\.')} \\(node v\\d+\\.\\d+\\.\\d+\\)$`));
  });
});
