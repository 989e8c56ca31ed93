/**
 * Subprocess helpers for the operator tests: the real `tms` command (bin/tms.js), run as an
 * operator would run it. Every child started here is tracked so a suite can kill what is left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../../test/ports.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const TMS_BIN = fileURLToPath(new URL('../../bin/tms.js', import.meta.url));

/** Generous: a tsx start-up on a busy 2-core machine can take several seconds. */
const OUTPUT_WAIT_MS = 60_000;

/**
 * The parent's environment without anything that configures TMS, so a child sees only the
 * variables a test gives it (no DATABASE_URL, PORT or token leaking in from the shell).
 */
export function childEnvironment(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (name.startsWith('TMS_') || ['DATABASE_URL', 'PORT', 'HOST', 'NODE_OPTIONS'].includes(name)) continue;
    base[name] = value;
  }
  return { ...base, ...env };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `tms <args>` to completion. */
export function runTms(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TMS_BIN, ...args], { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs `tms admin <args> --json` and parses what it prints; fails loudly on a non-zero exit. */
export async function runAdminJson(args: string[], env: Record<string, string>): Promise<any> {
  const result = await runTms(['admin', ...args, '--json'], env);
  if (result.code !== 0) throw new Error(`tms admin ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout);
}

export interface RunningTms {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout contains the text; rejects if the process exits first or the wait runs out. */
  waitForOutput(text: string | RegExp): Promise<string>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/** Starts a long-running `tms <args>` (start, api, worker). */
export function startTms(args: string[], env: Record<string, string>, script: string = TMS_BIN): RunningTms {
  const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const listener of listeners) listener();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  let closed = false;
  void exited.then(() => (closed = true));
  const matches = (text: string | RegExp) => (typeof text === 'string' ? stdout.includes(text) : text.test(stdout));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForOutput: (text) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (matches(text)) {
            done();
            resolve(stdout);
          } else if (closed || child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`tms ${args.join(' ')} exited before printing ${String(text)}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`tms ${args.join(' ')} did not print ${String(text)}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        }, OUTPUT_WAIT_MS);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Kills every child still running (for afterAll/finally). */
export async function killAllTms(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

export { freePort };
