/** The server under test runs as a child process: its own event loop, and its RSS readable from /proc. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { freePort } from '../../../test/ports.ts';

export interface ServerProcess {
  readonly pid: number;
  readonly url: string;
  /** The last lines the child wrote (stdout and stderr), for error reports. */
  output(): string;
  /** Peak resident set size so far (VmHWM), in MB; null where /proc is not available. */
  peakRssMb(): number | null;
  /** CPU seconds used so far. */
  cpuSeconds(): number | null;
  /** How the process ended if it ended before stop() was called, else null. */
  endedEarly(): string | null;
  /** SIGTERM (graceful: the gateway commits what it accepted), SIGKILL after a grace period. */
  stop(): Promise<number | null>;
}

export { freePort };

/** The last lines of a child's output, for an error report that says why it ended. */
export function lastLines(output: string, count = 16): string {
  return output.split('\n').slice(-count).join('\n');
}

/** The peak RSS of a process, from VmHWM in /proc/<pid>/status. */
export function readPeakRssMb(pid: number): number | null {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

let clockTicks: number | null = null;

/** CPU time (user + system) a process has used so far, in seconds; null where /proc is not available. */
export function readCpuSeconds(pid: number): number | null {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return null;
  }
}

/** Running processes of one program, by the command name the kernel gives them (/proc/<pid>/comm). */
function pidsOfProgram(commandName: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === commandName) pids.push(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return pids;
}

/** Whether a database URL names a server on this machine, whose processes /proc can see. */
function isLocalDatabase(url: string): boolean {
  const parsed = new URL(url);
  // postgresql:///db?host=/var/run/postgresql names a local socket directory.
  const host = parsed.hostname || parsed.searchParams.get('host') || '';
  return host === '' || host.startsWith('/') || host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

/** The program to meter beside a gateway (meterProgramCpu): a PostgreSQL server on this machine; null on SQLite or a remote server. */
export function localDatabaseServer(gatewayEnv: Record<string, string>): string | null {
  const url = gatewayEnv.DATABASE_URL;
  return url !== undefined && isLocalDatabase(url) ? 'postgres' : null;
}

/** Counts the CPU of a program's processes from now until stop(). */
export interface ProgramCpuMeter {
  /** CPU seconds its processes used since the meter started; null where /proc is not available or none ran. */
  stop(): number | null;
}

/**
 * The CPU of every process of one program on this machine, such as a local PostgreSQL server's
 * backends and background workers, sampled every `everyMs` while a measurement runs. A process
 * already running counts from its first sample; one that starts later (a new connection, an
 * autovacuum worker) counts from zero; one that ends counts up to its last sample, so what it did
 * after that is missed: the figure is a lower bound.
 */
export function meterProgramCpu(commandName: string, everyMs = 200): ProgramCpuMeter {
  const baseline = new Map<number, number>();
  const latest = new Map<number, number>();
  let readable = true;
  const sample = (starting: boolean) => {
    try {
      for (const pid of pidsOfProgram(commandName)) {
        const seconds = readCpuSeconds(pid);
        if (seconds === null) continue;
        if (!baseline.has(pid)) baseline.set(pid, starting ? seconds : 0);
        latest.set(pid, seconds);
      }
    } catch {
      readable = false;
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample(false);
      if (!readable || latest.size === 0) return null;
      let total = 0;
      for (const [pid, seconds] of latest) total += seconds - baseline.get(pid)!;
      return total;
    },
  };
}

const OUTPUT_KEEP_CHARS = 16_000;

/** SIGTERM, then SIGKILL if the child has not exited within 20 s; resolves with its exit code. */
export async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(killer);
  return code;
}

/** A gateway's environment for a bench run: its own database and secrets, no rate limit, quiet logs. */
export function benchGatewayEnvironment(
  harness: Pick<typeof import('../test/harness.ts'), 'gatewayEnvironment'>,
  database: Parameters<typeof import('../test/harness.ts').gatewayEnvironment>[0],
  extra: Record<string, string>,
): Record<string, string> {
  return {
    ...neutralEnvironment(),
    ...harness.gatewayEnvironment(database, { TMS_RATE_LIMIT_PER_SECOND: '1000000', TMS_RATE_LIMIT_BURST: '1000000', TMS_LOG_LEVEL: 'warn', ...extra }),
  };
}

/** The parent's environment without anything that configures a gateway (DATABASE_URL, TMS_*). */
export function neutralEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name === 'DATABASE_URL' || name.startsWith('TMS_') || name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  return env;
}

async function waitUntilReady(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output()}`);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  throw new Error(`server not ready on ${url} after ${timeoutMs} ms:\n${output()}`);
}

/** Starts `node <nodeArgs> <script> <args>` with the given environment and waits for GET /healthz. */
export async function startServer(input: {
  cwd: string;
  script: string;
  args?: string[];
  nodeArgs?: string[];
  env: Record<string, string>;
  port: number;
}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...(input.nodeArgs ?? []), input.script, ...(input.args ?? [])], {
    cwd: input.cwd,
    env: { ...input.env, PORT: String(input.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let captured = '';
  const keep = (chunk: Buffer) => {
    captured = (captured + chunk.toString('utf8')).slice(-OUTPUT_KEEP_CHARS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let stopping = false;
  let early: string | null = null;
  const exited = new Promise<number | null>((resolveExit) =>
    child.once('exit', (code, signal) => {
      if (!stopping) early = `exited with ${code ?? signal} at ${new Date().toISOString()}`;
      resolveExit(code);
    }),
  );
  const url = `http://127.0.0.1:${input.port}`;
  const output = () => captured;
  try {
    await waitUntilReady(url, child, output, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    pid: child.pid!,
    url,
    output,
    peakRssMb: () => readPeakRssMb(child.pid!),
    cpuSeconds: () => readCpuSeconds(child.pid!),
    endedEarly: () => early,
    stop: async () => {
      stopping = true;
      return stopChild(child, exited);
    },
  };
}

/** A bench child process (simulator, worker) whose last 16 kB of output are kept for error reports. */
export interface Child {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

export function spawnChild(root: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let captured = '';
  const keep = (chunk: Buffer) => {
    captured = (captured + chunk.toString('utf8')).slice(-16_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  return { child, output: () => captured, exited, stop: () => stopChild(child, exited) };
}

/** A program other than node (Kannel's boxes), kept like spawnChild's children: last 16 kB of output, SIGTERM then SIGKILL. */
export function spawnProgram(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): Child {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let captured = '';
  const keep = (chunk: Buffer) => {
    captured = (captured + chunk.toString('utf8')).slice(-16_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // A program that cannot start (missing binary) emits 'error' and may never emit 'exit'.
  const exited = new Promise<number | null>((resolveExit) => {
    child.once('exit', (code) => resolveExit(code));
    child.once('error', (error) => {
      captured += `\n${error.message}`;
      resolveExit(null);
    });
  });
  return { child, output: () => captured, exited, stop: () => stopChild(child, exited) };
}
