import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { refresh } from './helpers.ts';

const BIN = fileURLToPath(new URL('../bin/tms-zns-sim.js', import.meta.url));

function run(args: string[]): { child: ReturnType<typeof spawn>; firstLine: Promise<string>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  firstLine.catch(() => undefined);
  return { child, firstLine, exit };
}

describe('tms-zns-sim CLI', () => {
  it('starts alone with the demo seed, serves the wire protocol and stops on SIGTERM', async () => {
    const seed = fileURLToPath(new URL('../seeds/demo.json', import.meta.url));
    const { child, firstLine, exit } = run(['--port', '0', '--seed', seed, '--events-url', 'http://127.0.0.1:9/events']);
    try {
      const line = await firstLine;
      expect(line).toMatch(/^tms-zns-sim listening on http:\/\/127\.0\.0\.1:\d+ /);
      expect(line).toContain('events http://127.0.0.1:9/events');
      const url = /listening on (\S+)/.exec(line)?.[1] as string;
      const t = await refresh(url);
      expect(t.json.expires_in).toBe('90000');
      const stats = (await (await fetch(`${url}/_control/stats`)).json()) as { tokens: { issued: number } };
      expect(stats.tokens.issued).toBe(1);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exit).toBe(0);
  });

  it('rejects unknown options and prints usage', async () => {
    const { exit, child } = run(['--bogus']);
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    expect(await exit).toBe(2);
    expect(err).toContain('Usage: tms-zns-sim');
  });
});
