// The simulator's CPU per message in the shape of the gateway's full loop: each message is one plain send
// (unique tracking_id, keep-alive connections, the gateway's headers) and one delivery event posted back at
// once to a sink that answers 200, as the gateway's event route does. The simulator runs in its own process;
// its CPU comes from /proc/<pid>/stat, counted from just before the first send until its last event arrived.
//
//   node packages/gateway/bin/run-ts.js packages/zns-sim/bench/cpu.ts [--messages N] [--rate N] [--in-flight N] [--runs N] [--cpu-prof DIR] [--bin PATH]
//
// --rate (default 2000/s, about the gateway's loop) paces the sends: at a fixed rate the CPU per message does
// not depend on how busy the machine is (a saturated event loop would batch more work per wake-up); 0 = as
// fast as --in-flight allows.
// --bin runs another copy of the simulator (for before/after comparisons); --cpu-prof writes a V8 profile
// of the simulator (summarise it with packages/gateway/bench/profile-summary.ts).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '200' },
    runs: { type: 'string', default: '1' },
    'cpu-prof': { type: 'string' },
    bin: { type: 'string' },
  },
});
const MESSAGES = Number(values.messages);
const IN_FLIGHT = Number(values['in-flight']);
const RATE = Number(values.rate);
const RUNS = Number(values.runs);
const OA = '4318269720189301001';
const CLOCK_TICKS_PER_SECOND = 100;

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

let eventsReceived = 0;
let onEvent: (() => void) | null = null;
const sink = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    eventsReceived++;
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.end('{"ok":true}');
    onEvent?.();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/platform/zns/events`;

const bin = values.bin ?? fileURLToPath(new URL('../bin/tms-zns-sim.js', import.meta.url));
const profileArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [];
const child = spawn(process.execPath, [...profileArgs, bin, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const match = /listening on (\S+)/.exec(out);
    if (match?.[1]) resolve(match[1]);
  });
  child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
});

const json = { 'content-type': 'application/json' };
await fetch(`${url}/_control/events`, { method: 'PUT', headers: json, body: JSON.stringify({ url: sinkUrl, delay_ms: 0, max_in_flight: 256, timeout_ms: 10_000 }) });
await fetch(`${url}/_control/oas/${OA}/quota`, { method: 'PUT', headers: json, body: JSON.stringify({ daily_quota: 1_000_000_000 }) });
await fetch(`${url}/_control/recipient-rules`, { method: 'PUT', headers: json, body: '[]' });
const tokenResponse = await fetch(`${url}/v4/oa/access_token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', secret_key: 'demo-app-secret-change-me' },
  body: 'app_id=2074138120372622001&grant_type=refresh_token&refresh_token=demo-refresh-token-0001',
});
const { access_token: accessToken } = (await tokenResponse.json()) as { access_token: string };

const agent = new Agent({ keepAliveTimeout: 30_000, connections: 512, pipelining: 1 });
const origin = new URL(url).origin;
let sequence = 0;

async function sendOne(index: number): Promise<void> {
  const body = JSON.stringify({
    phone: `8491${String(1_000_000 + (index % 9_000_000)).slice(-7)}`,
    template_id: '250002',
    template_data: { otp: String(100_000 + (index % 900_000)) },
    tracking_id: `msg_01KBENCH${String(index).padStart(17, '0')}`,
  });
  const response = await agent.request({ origin, path: '/message/template', method: 'POST', headers: { access_token: accessToken, 'content-type': 'application/json' }, body });
  const answer = (await response.body.json()) as { error: number };
  if (answer.error !== 0) throw new Error(`send refused: ${JSON.stringify(answer)}`);
}

for (let run = 0; run < RUNS; run++) {
  eventsReceived = 0;
  const first = sequence;
  sequence += MESSAGES;
  let next = first;
  const allEvents = new Promise<void>((resolve) => {
    onEvent = () => {
      if (eventsReceived >= MESSAGES) resolve();
    };
  });
  const cpuBefore = cpuSeconds(child.pid!);
  const started = performance.now();
  // Paced: the n-th send of the run waits for its moment, n / RATE seconds after the start.
  const due = (index: number): number => started + ((index - first) * 1000) / RATE;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < first + MESSAGES) {
        const index = next++;
        if (RATE > 0) {
          const wait = due(index) - performance.now();
          if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        }
        await sendOne(index);
      }
    }),
  );
  await allEvents;
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(child.pid!) - cpuBefore;
  console.log(
    JSON.stringify({ run, messages: MESSAGES, seconds: +seconds.toFixed(2), per_second: Math.round(MESSAGES / seconds), simulator_cpu_s: +cpu.toFixed(2), simulator_cpu_us_per_message: Math.round((cpu / MESSAGES) * 1e6) }),
  );
}

await agent.close();
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
sink.close();
