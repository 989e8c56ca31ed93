#!/usr/bin/env node
// `npm start`: the whole service on one machine. On the embedded database with no real platform
// configured (no ZNS_API_URL), it also runs the ZNS simulator (packages/zns-sim, demo seed) as its
// own process and points the gateway at it over HTTP, so the demo's messages really end in
// `delivered`. With ZNS_API_URL or DATABASE_URL set it runs `tms start` alone.
/* global fetch */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const gatewayBin = `${root}packages/gateway/bin/tms.js`;
const simulatorBin = `${root}packages/zns-sim/bin/tms-zns-sim.js`;
const withSimulator = !process.env.ZNS_API_URL && !process.env.DATABASE_URL;

const children = [];
function run(bin, args, env) {
  const child = spawn(process.execPath, [bin, ...args], { stdio: 'inherit', env: { ...process.env, ...env } });
  children.push(child);
  return child;
}

async function waitUntilListening(url) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
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
  const simulator = run(simulatorBin, ['--port', simulatorPort, '--events-url', `http://127.0.0.1:${gatewayPort}/platform/zns/events`, '--events-delay-ms', '500']);
  simulator.on('exit', (code) => {
    if (code !== 0 && code !== null) console.error(`ZNS simulator exited with ${code}`);
  });
  await waitUntilListening(`${simulatorUrl}/_control/stats`);
  console.log(`ZNS simulator (demo seed) on ${simulatorUrl}; the gateway sends to it over HTTP (set ZNS_API_URL for the real platform)`);
  gatewayEnv = { ZNS_OAUTH_URL: simulatorUrl, ZNS_API_URL: simulatorUrl };
}

const gateway = run(gatewayBin, ['start'], gatewayEnv);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });
}
gateway.on('exit', (code, signal) => {
  for (const child of children) if (child !== gateway) child.kill('SIGTERM');
  process.exitCode = code ?? (signal ? 1 : 0);
});
