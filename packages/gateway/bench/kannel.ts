/**
 * Kannel 1.4.5 (Debian `kannel` + `kannel-extras`) end to end on loopback, as the peer gateway our
 * full loop is compared with:
 *
 *   load generator ──GET /cgi-bin/sendsms──▶ smsbox ──▶ bearerbox ──▶ fake SMSC ──▶ fakesmsc
 *   receiver ◀──GET dlr-url (unsigned)── smsbox ◀── bearerbox (delivery report from its DLR store)
 *
 * Each message asks for `dlr-mask=1`, the final delivery success only, so it gets exactly one
 * callback, as our one delivery report per message. Kannel's fake SMSC creates that report itself
 * the moment it has written the message to fakesmsc (there is no real handset to report back), from
 * the DLR entry it added on the way out; the entry lives in bearerbox's memory (`dlr-storage =
 * internal`), and no message store is configured, so nothing is written to disk. fakesmsc is
 * started with `-m 0`: it generates no messages of its own and only reads what it is sent.
 *
 * Timed from the first request to the last new callback; CPU is that of bearerbox, smsbox and
 * fakesmsc (user + system from /proc), read before the first request and half a second after the
 * last callback; the load generator and the receiver (both in the benchmark process) are not counted.
 * Like our loop, a Kannel start takes two runs of the same size: `cold` on freshly started boxes,
 * then `warm` on the same, still running boxes.
 */
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { describeCpuByProcess, measureLoopPhase, type LoopPhase } from './loop-phase.ts';
import { neutralEnvironment, readPeakRssMb, spawnProgram, type Child } from './processes.ts';
import { startDlrReceiver, type CountingReceiver } from './webhook-receiver.ts';

export const KANNEL_PROGRAMS = {
  bearerbox: '/usr/sbin/bearerbox',
  smsbox: '/usr/sbin/smsbox',
  fakesmsc: '/usr/lib/kannel/test/fakesmsc',
} as const;

type ProgramName = keyof typeof KANNEL_PROGRAMS;

/** The final delivery success: one callback per delivered message (8, the SMSC's acceptance, is not asked for). */
export const KANNEL_DLR_MASK = 1;

/** Why Kannel cannot run here, or null when it can. */
export function kannelMissing(): string | null {
  for (const path of Object.values(KANNEL_PROGRAMS)) {
    try {
      accessSync(path, constants.X_OK);
    } catch {
      return 'Kannel not installed (apt-get install kannel kannel-extras)';
    }
  }
  return null;
}

/** A Kannel run: the same figures as TMS's loop, CPU over bearerbox, smsbox and fakesmsc. */
export type KannelPhase = LoopPhase;

export interface KannelResult {
  connections: number;
  dlrMask: number;
  phases: KannelPhase[];
  callbacks: number;
  duplicates: number;
  /** Callbacks that were not a final delivery success for one of our ids. */
  rejected: number;
  peakRssMb: Record<ProgramName, number | null>;
  problems: string[];
}

export interface KannelOptions {
  messages: number;
  connections: number;
  /**
   * smsbox's `immediate-sendsms-reply`: answer a sendsms at once ("Sent."), before bearerbox has
   * taken the message. Off by default, where the answer ("0: Accepted for delivery") waits for
   * bearerbox's acknowledgement, as our 202 waits for the commit.
   */
  immediateReply: boolean;
  timeoutSeconds: number;
  say(text: string): void;
}

interface Ports {
  admin: number;
  smsbox: number;
  fakeSmsc: number;
  sendsms: number;
}

const ADMIN_PASSWORD = 'bench';
const SENDSMS_USER = 'bench';

/** One bearerbox with one fake SMSC, one smsbox with one sendsms user; warnings and worse only, to files in `dir`. */
function configuration(dir: string, ports: Ports, immediateReply: boolean): string {
  return `group = core
admin-port = ${ports.admin}
admin-password = ${ADMIN_PASSWORD}
admin-allow-ip = "127.0.0.1"
smsbox-port = ${ports.smsbox}
box-allow-ip = "127.0.0.1"
dlr-storage = internal
log-file = "${join(dir, 'bearerbox.log')}"
log-level = 2

group = smsc
smsc = fake
smsc-id = fake
port = ${ports.fakeSmsc}
connect-allow-ip = "127.0.0.1"

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${ports.smsbox}
sendsms-port = ${ports.sendsms}
immediate-sendsms-reply = ${immediateReply ? 'true' : 'false'}
log-file = "${join(dir, 'smsbox.log')}"
log-level = 2

group = sendsms-user
username = ${SENDSMS_USER}
password = ${ADMIN_PASSWORD}

# smsbox wants a service for incoming messages; none arrive here (fakesmsc sends none).
group = sms-service
keyword = default
text = "no service"
`;
}

/**
 * A loopback port below the kernel's ephemeral range, free a moment ago. Kannel's boxes bind their
 * ports only after bearerbox is up, and by then the boxes' own outgoing connections hold ephemeral
 * ports: a port from the ephemeral range (what listening on port 0 gives) can be taken meanwhile.
 */
async function listeningPort(): Promise<number> {
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * (ephemeralLow - 10_000));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below the ephemeral range');
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, alive: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ended = alive();
    if (ended) throw new Error(`${ended} before ${what}`);
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not after ${timeoutMs / 1000} s`);
}

async function status(ports: Ports): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${ports.admin}/status.txt?password=${ADMIN_PASSWORD}`, { signal: AbortSignal.timeout(1000) });
  return response.text();
}

/** `count` sendsms requests at `connections`, ids `${prefix}${index}`; throws on any answer but 202 "0: Accepted" (or "Sent." when answered at once). */
async function sendThroughSendsms(ports: Ports, receiver: CountingReceiver, prefix: string, count: number, connections: number, immediateReply: boolean): Promise<void> {
  const accepted = immediateReply ? 'Sent.' : '0:';
  const pool = new Pool(`http://127.0.0.1:${ports.sendsms}`, { connections, pipelining: 1 });
  let next = 0;
  const one = async () => {
    while (next < count) {
      const index = next++;
      const query = new URLSearchParams({
        username: SENDSMS_USER,
        password: ADMIN_PASSWORD,
        from: '1234',
        to: `8490${String(1_000_000 + index).slice(-7)}`,
        text: `Your verification code is ${100_000 + (index % 900_000)}`,
        'dlr-mask': String(KANNEL_DLR_MASK),
        // Kannel fills in %d (the report's type) when it calls back.
        'dlr-url': `${receiver.url}?id=${prefix}${index}&status=%d`,
      });
      const response = await pool.request({ path: `/cgi-bin/sendsms?${query.toString()}`, method: 'GET' });
      const text = await response.body.text();
      if (response.statusCode !== 202 || !text.startsWith(accepted)) throw new Error(`sendsms: ${response.statusCode} ${text.slice(0, 200)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, one));
  } finally {
    await pool.close();
  }
}

export async function runKannel(options: KannelOptions): Promise<KannelResult> {
  const { say } = options;
  const result: KannelResult = {
    connections: options.connections,
    dlrMask: KANNEL_DLR_MASK,
    phases: [],
    callbacks: 0,
    duplicates: 0,
    rejected: 0,
    peakRssMb: { bearerbox: null, smsbox: null, fakesmsc: null },
    problems: [],
  };
  const dir = mkdtempSync(join(tmpdir(), 'tms-bench-kannel-'));
  const picked = new Set<number>();
  while (picked.size < 4) picked.add(await listeningPort());
  const [admin, smsbox, fakeSmsc, sendsms] = [...picked] as [number, number, number, number];
  const ports: Ports = { admin, smsbox, fakeSmsc, sendsms };
  const configFile = join(dir, 'kannel.conf');
  writeFileSync(configFile, configuration(dir, ports, options.immediateReply));
  const receiver = await startDlrReceiver();
  const boxes: Partial<Record<ProgramName, Child>> = {};
  const start = (name: ProgramName, args: string[]) => {
    boxes[name] = spawnProgram(KANNEL_PROGRAMS[name], args, { cwd: dir, env: neutralEnvironment() });
  };
  const ended = () => {
    for (const [name, box] of Object.entries(boxes)) {
      if (box.child.exitCode === null && box.child.signalCode === null) continue;
      // A box's panic ends with a backtrace of addresses: the lines before it say why.
      const reason = box.output().split('\n').filter((line) => line.trim() !== '' && !/\+0x[0-9a-f]+\) \[0x/.test(line));
      return `${name} exited (${box.child.exitCode ?? box.child.signalCode}):\n${reason.slice(-6).join('\n')}`;
    }
    return null;
  };
  try {
    say(`  Kannel: bearerbox, smsbox and fakesmsc on loopback (dlr-mask=${KANNEL_DLR_MASK}, internal DLR storage, no message store), ${dir}`);
    // -v 2: warnings and worse on the boxes' own output, like the log files.
    start('bearerbox', ['-v', '2', configFile]);
    await waitFor('bearerbox answering on its admin port', 15_000, async () => (await status(ports)).includes('Status: running'), ended);
    start('smsbox', ['-v', '2', configFile]);
    start('fakesmsc', ['-H', '127.0.0.1', '-r', String(ports.fakeSmsc), '-m', '0', '-v', '2', '1234 84900000000 text unused']);
    await waitFor(
      'smsbox and fakesmsc connected to bearerbox',
      15_000,
      async () => {
        const text = await status(ports);
        return /smsbox:.*on-line/.test(text) && new RegExp(`FAKE:${ports.fakeSmsc} \\(online`).test(text);
      },
      ended,
    );
    await waitFor('smsbox answering on its sendsms port', 15_000, async () => (await fetch(`http://127.0.0.1:${ports.sendsms}/`, { signal: AbortSignal.timeout(1000) })).status > 0, ended);

    const processes = Object.fromEntries((['bearerbox', 'smsbox', 'fakesmsc'] as const).map((name) => [name, boxes[name]!.child.pid!]));
    for (const label of ['cold', 'warm'] as const) {
      const phase = await measureLoopPhase({
        label,
        messages: options.messages,
        processes,
        receiver,
        timeoutSeconds: options.timeoutSeconds,
        callbackName: 'callbacks',
        send: () => sendThroughSendsms(ports, receiver, `${label}-`, options.messages, options.connections, options.immediateReply),
        say,
      });
      result.phases.push(phase);
      say(`  Kannel ${label}: ${phase.perSecond.toFixed(0)} msg/s (${phase.seconds.toFixed(2)} s, sendsms answered all in ${phase.acceptSeconds.toFixed(2)} s), ${phase.cpuMicrosecondsPerMessage?.toFixed(0) ?? '-'} µs CPU/msg (${describeCpuByProcess(phase)})`);
    }
    for (const name of ['bearerbox', 'smsbox', 'fakesmsc'] as const) result.peakRssMb[name] = readPeakRssMb(boxes[name]!.child.pid!);
    const expected = new Set(result.phases.flatMap((phase) => Array.from({ length: phase.messages }, (_, index) => `${phase.label}-${index}`)));
    const missing = [...expected].filter((id) => !receiver.seen.has(id));
    if (missing.length > 0) result.problems.push(`${missing.length} messages without a callback (e.g. ${missing[0]})`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    result.problems.push(`Kannel did not complete: ${message.split('\n').slice(0, 16).join('\n')}`);
  } finally {
    // bearerbox shuts down cleanly on SIGTERM and takes its boxes with it: smsbox and fakesmsc
    // leave when their connection closes, and are only signalled if they have not.
    await boxes.bearerbox?.stop();
    for (const name of ['smsbox', 'fakesmsc'] as const) {
      const box = boxes[name];
      if (!box) continue;
      await Promise.race([box.exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      await box.stop();
    }
    result.callbacks = receiver.stats.requests;
    result.duplicates = receiver.stats.duplicates;
    result.rejected = receiver.stats.rejected;
    if (result.duplicates > 0) result.problems.push(`${result.duplicates} duplicate callbacks`);
    if (result.rejected > 0) result.problems.push(`${result.rejected} callbacks that were not a final delivery success (status 1) for one of our ids`);
    await receiver.close();
    // Keep the logs of a failed run.
    if (result.problems.length === 0) rmSync(dir, { recursive: true, force: true });
    else result.problems.push(`Kannel's configuration and logs: ${dir}`);
  }
  return result;
}
