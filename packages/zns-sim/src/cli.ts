/**
 * tms-zns-sim --port N --seed FILE [--host H] [--events-url URL] [--events-delay-ms N] [--state-file FILE [--durable-sends]]
 * Starts the simulator alone and runs until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { DEMO_SEED_PATH, startSimulator } from './index.ts';

const USAGE = `Usage: tms-zns-sim [--port N] [--host H] [--seed FILE] [--events-url URL] [--events-delay-ms N] [--state-file FILE [--durable-sends]]

  --port N             listen port (default 8090; 0 picks a free port)
  --host H             listen address (default 127.0.0.1)
  --seed FILE          seed file (default: the bundled seeds/demo.json)
  --events-url URL     where delivery events (user_received_message) are POSTed
  --events-delay-ms N  delay between an accepted send and its delivery event
  --state-file FILE    keep tokens, quota, RSA keys and recent messages in FILE across restarts
                       (loaded at start if it exists; default: none, every start begins from the seed)
  --durable-sends      with --state-file: store each accepted send before answering it, so a crash never
                       forgets an answered send (one fsynced line per send, appended to FILE.sends)
  --help               this text

Serves the OAuth path (POST /v4/oa/access_token), the ZNS business paths and /_control on one port.
See packages/zns-sim/README.md.`;

function fail(message: string): never {
  process.stderr.write(`tms-zns-sim: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function int(v: string | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) fail(`${name} must be a non-negative integer`);
  return Number(v);
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      seed: { type: 'string' },
      'events-url': { type: 'string' },
      'events-delay-ms': { type: 'string' },
      'state-file': { type: 'string' },
      'durable-sends': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (err) {
  fail((err as Error).message);
}

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const port = int(values.port as string | undefined, '--port', 8090);
if (port > 65535) fail('--port must be ≤ 65535');
const seed = (values.seed as string | undefined) ?? DEMO_SEED_PATH;
const eventsUrl = values['events-url'] as string | undefined;
const delay = values['events-delay-ms'] as string | undefined;
const stateFile = values['state-file'] as string | undefined;
if (stateFile === '') fail('--state-file needs a file name');
const durableSends = values['durable-sends'] === true;
if (durableSends && stateFile === undefined) fail('--durable-sends needs --state-file');

try {
  const sim = await startSimulator({
    port,
    host: (values.host as string | undefined) ?? '127.0.0.1',
    seed,
    ...(eventsUrl !== undefined ? { eventsUrl } : {}),
    ...(delay !== undefined ? { eventsDelayMs: int(delay, '--events-delay-ms', 0) } : {}),
    ...(stateFile !== undefined ? { stateFile } : {}),
    ...(durableSends ? { durableSends } : {}),
  });
  const oas = sim.control.oas().map((o) => o.oa_id).join(', ');
  const events = sim.control.getEvents();
  const state = stateFile !== undefined ? `; state ${stateFile}${durableSends ? ', sends stored before they are answered' : ''}` : '';
  process.stdout.write(`tms-zns-sim listening on ${sim.url} (seed ${seed}; OAs ${oas}; events ${events.url ?? 'off'}${state})\n`);
  let stopping = false;
  const stopNow = (): never => {
    sim.saveState();
    process.exit(1);
  };
  const stop = (): void => {
    if (stopping) stopNow(); // a second signal: stop now
    stopping = true;
    setTimeout(stopNow, 5000).unref();
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  process.stderr.write(`tms-zns-sim: ${(err as Error).message}\n`);
  process.exit(1);
}
