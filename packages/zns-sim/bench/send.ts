// Throughput of the simulator's plain send path, with the simulator in its own process (as the gateway's
// benchmark runs it):  npx tsx packages/zns-sim/bench/send.ts [seconds] [--events]
// With --events, delivery events go to a sink in this process (200 ms after each send).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const seconds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 10);
const withEvents = process.argv.includes('--events');
const OA = '4318269720189301001';

let events = 0;
const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    events++;
    res.end('ok');
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/events`;

const bin = fileURLToPath(new URL('../bin/tms-zns-sim.js', import.meta.url));
const child = spawn(process.execPath, [bin, '--port', '0', '--events-delay-ms', '200'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    const m = /listening on (\S+)/.exec(out);
    if (m?.[1]) resolve(m[1]);
  });
  child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
});

const json = { 'content-type': 'application/json' };
await fetch(`${url}/_control/events`, { method: 'PUT', headers: json, body: JSON.stringify({ url: withEvents ? sinkUrl : null }) });
await fetch(`${url}/_control/oas/${OA}/quota`, { method: 'PUT', headers: json, body: JSON.stringify({ daily_quota: 1_000_000_000 }) });
const tokenRes = await fetch(`${url}/v4/oa/access_token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', secret_key: 'demo-app-secret-change-me' },
  body: 'app_id=2074138120372622001&grant_type=refresh_token&refresh_token=demo-refresh-token-0001',
});
const { access_token } = (await tokenRes.json()) as { access_token: string };

const result = await autocannon({
  url: `${url}/message/template`,
  method: 'POST',
  connections: 50,
  duration: seconds,
  headers: { ...json, access_token },
  body: JSON.stringify({ phone: '84987654321', template_id: '250002', template_data: { otp: '123456' }, tracking_id: 'bench' }),
});
await new Promise((r) => setTimeout(r, 1000));
const stats = (await (await fetch(`${url}/_control/stats`)).json()) as { sends: unknown; events: unknown };
console.log(
  JSON.stringify(
    {
      req_per_s: Math.round(result.requests.average),
      latency_ms: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      non2xx: result.non2xx,
      errors: result.errors,
      sends: stats.sends,
      events: withEvents ? { received_by_sink: events, simulator: stats.events } : 'off',
    },
    null,
    2,
  ),
);
child.kill('SIGTERM');
sink.close();
