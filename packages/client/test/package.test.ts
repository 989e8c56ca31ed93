/**
 * The package as integrators install it: compiled to ESM JavaScript with type declarations, runnable
 * by plain Node without tsx, and an SDK core that imports no Node module (so it runs on Bun, Deno
 * and edge runtimes; only the CLI uses node:).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './harness.ts';

const run = promisify(execFile);
const PACKAGE = join(REPO_ROOT, 'packages/client');
let installed: string;

beforeAll(async () => {
  installed = join(mkdtempSync(join(tmpdir(), 'tms-client-package-')), 'client');
  await run(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(PACKAGE, 'tsconfig.json'), '--outDir', join(installed, 'dist')], { cwd: REPO_ROOT });
  // What `npm pack` ships (package.json "files"): bin, dist, README; no src.
  for (const entry of ['package.json', 'bin', 'README.md']) cpSync(join(PACKAGE, entry), join(installed, entry), { recursive: true });
}, 120_000);

afterAll(() => {
  if (installed) rmSync(join(installed, '..'), { recursive: true, force: true });
});

describe('the built package', () => {
  it('ships JavaScript and declarations for the entry point the package.json names', () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(existsSync(join(installed, manifest.exports['.'].default))).toBe(true);
    expect(readFileSync(join(installed, manifest.exports['.'].types), 'utf8')).toContain('export');
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(existsSync(join(installed, 'dist/rsa.test.js'))).toBe(false);
  });

  it('imports no Node module outside the CLI', () => {
    for (const file of readdirSync(join(installed, 'dist')).filter((name) => name.endsWith('.js'))) {
      expect(readFileSync(join(installed, 'dist', file), 'utf8'), file).not.toMatch(/from ["']node:|require\(/);
    }
  });

  it('works from plain Node (no tsx): the SDK entry point and the tms-client bin', async () => {
    const script = `
      const sdk = await import(${JSON.stringify(join(installed, 'dist/index.js'))});
      const client = new sdk.Client({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9/' });
      const signature = await sdk.signWebhook('{"a":1}', 'k');
      console.log(JSON.stringify({ baseUrl: client.baseUrl, verified: await sdk.verifyWebhook('{"a":1}', signature, 'k'), exports: Object.keys(sdk).sort() }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: installed });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ baseUrl: 'http://127.0.0.1:9', verified: true });
    expect(result.exports).toEqual(expect.arrayContaining(['Client', 'TmsError', 'encryptPhone', 'parseDeliveryReport', 'verifyWebhook', 'WebhookError']));

    const help = await run(process.execPath, [join(installed, 'bin/tms-client.js'), '--help'], { cwd: installed });
    expect(help.stdout).toContain('Usage: tms-client <command>');
  });
});
