#!/usr/bin/env node
// `npm start`: the whole service on one machine. On the embedded database with no real platform
// configured (no ZNS_API_URL), it also runs the ZNS simulator (packages/zns-sim, demo seed) as its
// own process and points the gateway at it over HTTP, so the demo's messages really end in
// `delivered`. With ZNS_API_URL or DATABASE_URL set it runs `tms start` alone.
//
// Run it any number of times on one data directory: the simulator keeps the platform's side of the
// demo (the single-use refresh token it issued last, quota, RSA key, messages) in
// <TMS_DATA_DIR>/zns-sim-state.json next to the gateway's database.
//
// Stopping: SIGINT, SIGTERM or SIGHUP stops the gateway (it drains), then the simulator (it saves its
// state), then this process exits 0. The children never outlive this process:
// - they run in their own process group, so a Ctrl-C reaches them once, through here, in that order;
// - each holds a pipe from this process (scripts/lifeline.js): if this process dies, even by SIGKILL,
//   they stop themselves;
// - npm runs this script through `sh -c`, and npm forwards SIGTERM only to that shell, which dies
//   without passing it on (and npm does not forward SIGHUP at all: it just dies). So when started by
//   npm, this process also stops when npm or the shell goes away.
/* global fetch */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const gatewayBin = join(root, 'packages/gateway/bin/tms.js');
const simulatorBin = join(root, 'packages/zns-sim/bin/tms-zns-sim.js');
const lifeline = pathToFileURL(join(root, 'scripts/lifeline.js')).href;
const withSimulator = !process.env.ZNS_API_URL && !process.env.DATABASE_URL;

/**
 * How long a child gets to stop before it is killed. Only for a process that hangs: the gateway bounds
 * its own shutdown (30 s with the default ZNS_TIMEOUT_MS), the simulator takes well under a second.
 */
const GATEWAY_STOP_GRACE_MS = 45_000;
const SIMULATOR_STOP_GRACE_MS = 10_000;
/** How often a process started by npm looks whether npm (its parent) is still there. */
const PARENT_CHECK_MS = 250;

const children = new Set();
let stopping = false;

function run(name, bin, args, env, stopGraceMs) {
  const child = spawn(process.execPath, ['--import', lifeline, bin, ...args], {
    // fd 3 is the lifeline: only this process holds its other end.
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
    env: { ...process.env, ...env },
    // Its own process group: terminal signals reach it through this process only.
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const entry = { name, child, exited, stopGraceMs };
  children.add(entry);
  exited.then(({ code, signal }) => {
    children.delete(entry);
    if (!stopping) {
      console.error(`${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping`);
      void stopAll(code || 1);
    }
  });
  return entry;
}

/** Sends SIGTERM and waits for the exit; kills it if it takes longer than its stop grace. */
async function stopChild(entry) {
  if (entry.child.exitCode !== null || entry.child.signalCode !== null) return;
  entry.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    console.error(`${entry.name} did not stop within ${entry.stopGraceMs} ms; killing it`);
    entry.child.kill('SIGKILL');
  }, entry.stopGraceMs);
  await entry.exited;
  clearTimeout(timer);
}

/** In the reverse order of start: the gateway (it may still be sending to the simulator), then the simulator. */
async function stopAll(exitCode) {
  if (stopping) return;
  stopping = true;
  for (const entry of [...children].reverse()) await stopChild(entry);
  process.exit(exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  // A repeated signal (Ctrl-C reaches both npm and this process, and npm passes it on) changes nothing.
  process.on(signal, () => void stopAll(0));
}

/** The parent pid of `pid` (Linux /proc), or null when that cannot be read (no such process, no /proc). */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (command) state ppid …": the command may itself contain spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** Is `pid` the `sh -c '<script>'` npm runs a script in (rather than npm itself)? */
function isScriptShell(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] === '-c';
  } catch {
    return false;
  }
}

if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  // Under `sh -c`, npm is the grandparent: when npm dies the shell lives on, waiting for us.
  const npm = isScriptShell(parent) ? parentOf(parent) : null;
  setInterval(() => {
    if (process.ppid !== parent || (npm !== null && parentOf(parent) !== npm)) void stopAll(0);
  }, PARENT_CHECK_MS).unref();
}

async function waitUntilListening(url, simulator) {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (!children.has(simulator)) throw new Error('the ZNS simulator exited during start-up');
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`the ZNS simulator did not start at ${url}`);
}

let gatewayEnv = {};
if (withSimulator) {
  const gatewayPort = process.env.PORT || '3000';
  const simulatorPort = process.env.TMS_SIMULATOR_PORT || '8090';
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
  // The gateway resolves TMS_DATA_DIR the same way, from the same working directory.
  const dataDir = resolve(process.env.TMS_DATA_DIR || '.tms');
  const stateFile = join(dataDir, 'zns-sim-state.json');
  if (existsSync(join(dataDir, 'tms.sqlite')) && !existsSync(stateFile)) {
    console.error(
      `warning: ${dataDir} holds a demo database but no simulator state (${stateFile}); the simulator starts from its seed ` +
        'and the demo sender account may be refused (-14014). To reset the demo: stop, delete that directory, start again.',
    );
  }
  const simulator = run('the ZNS simulator', simulatorBin, [
    '--port', simulatorPort,
    '--events-url', `http://127.0.0.1:${gatewayPort}/platform/zns/events`,
    '--events-delay-ms', '500',
    '--state-file', stateFile,
  ], {}, SIMULATOR_STOP_GRACE_MS);
  try {
    await waitUntilListening(`${simulatorUrl}/_control/stats`, simulator);
  } catch (error) {
    console.error(error.message);
    await stopAll(1);
  }
  const allowPrivate = process.env.TMS_WEBHOOK_ALLOW_PRIVATE;
  // The demo's webhook receiver runs on this machine (tms-client listen); an explicit setting wins.
  const allowPrivateWebhooks = allowPrivate === undefined || allowPrivate === '' ? 'true' : allowPrivate;
  console.log(
    `ZNS simulator (demo seed) on ${simulatorUrl}, state in ${stateFile}; the gateway sends to it over HTTP (set ZNS_API_URL for the real platform)`,
  );
  gatewayEnv = { ZNS_OAUTH_URL: simulatorUrl, ZNS_API_URL: simulatorUrl, TMS_WEBHOOK_ALLOW_PRIVATE: allowPrivateWebhooks };
}

if (!stopping) run('the gateway', gatewayBin, ['start'], gatewayEnv, GATEWAY_STOP_GRACE_MS);
