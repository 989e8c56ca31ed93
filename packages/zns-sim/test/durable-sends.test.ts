// --durable-sends / durableSends: a send is on disk before it is answered, so a crash never forgets an
// answered send; and GET /_control/messages, which lists what the platform knows across a restart.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../src/index.ts';
import { OA_ID, accessToken, control, eventReceiver, get, otpSend, post, start } from './helpers.ts';

const BIN = fileURLToPath(new URL('../bin/tms-zns-sim.js', import.meta.url));
const dirs: string[] = [];
function stateFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'zns-sim-durable-'));
  dirs.push(dir);
  return join(dir, 'zns-sim-state.json');
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface CliRun {
  url: string;
  output(): string;
  exited: Promise<number | null>;
  kill(): Promise<void>;
}

function runCli(args: string[]): CliRun {
  const child = spawn(process.execPath, [BIN, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    get url() {
      return /listening on (\S+)/.exec(output)?.[1] ?? '';
    },
    output: () => output,
    exited,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function listening(run: CliRun): Promise<string> {
  const deadline = Date.now() + 30_000;
  while (run.url === '') {
    if (Date.now() > deadline) throw new Error(`tms-zns-sim did not start: ${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return run.url;
}

describe('--durable-sends / durableSends', () => {
  it('the CLI keeps a send answered just before a SIGKILL, and delivers it after the restart', async () => {
    const file = stateFile();
    const receiver = await eventReceiver();
    try {
      // Its delivery is far off: only the state file can bring it back.
      const first = runCli(['--state-file', file, '--durable-sends', '--events-url', receiver.url, '--events-delay-ms', '600000']);
      const firstUrl = await listening(first);
      expect(first.output()).toContain('sends stored before they are answered');
      const token = await accessToken(firstUrl);
      const sent = await post(firstUrl, '/message/template', token, otpSend('84987654321', { tracking_id: 'kept-1' }));
      expect(sent.json.error).toBe(0);
      await first.kill();

      const second = runCli(['--state-file', file, '--durable-sends', '--events-url', receiver.url, '--events-delay-ms', '50']);
      try {
        const url = await listening(second);
        const known = await control(url, 'GET', '/messages?tracking_id=kept-1');
        expect(known.json).toMatchObject({ count: 1, messages: [{ msg_id: sent.json.data.msg_id, oa_id: OA_ID, tracking_id: 'kept-1' }] });
        expect((await get(url, '/message/quota', token)).json.data.remainingQuota).toBe('4999');
        const [event] = await receiver.waitFor(1);
        expect(event!.body.message).toMatchObject({ msg_id: sent.json.data.msg_id, tracking_id: 'kept-1' });
      } finally {
        await second.kill();
      }
    } finally {
      await receiver.close();
    }
  });

  it('refuses a send it cannot store: HTTP 500, no quota used, nothing kept or delivered', async () => {
    const file = stateFile();
    const sim = await start({ stateFile: file, durableSends: true });
    // The sends journal cannot be opened: a directory stands in its place.
    const blocker = `${file}.sends`;
    try {
      const token = await accessToken(sim.url);
      mkdirSync(blocker);
      const refused = await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'not-kept' }));
      expect(refused.status).toBe(500);
      expect(sim.control.getQuota(OA_ID).used_today).toBe(0);
      expect(sim.control.messages({ tracking_id: 'not-kept' })).toEqual([]);
      expect(sim.control.stats().messages).toMatchObject({ stored: 0, pending_delivery: 0 });
      rmSync(blocker, { recursive: true });
      const accepted = await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'kept-2' }));
      expect(accepted.json.error).toBe(0);
      expect(sim.control.getQuota(OA_ID).used_today).toBe(1);
    } finally {
      rmSync(blocker, { recursive: true, force: true });
      await sim.close();
    }
  });

  it('starts after a crash in the middle of storing a send, with every send answered before it', async () => {
    const file = stateFile();
    const first = runCli(['--state-file', file, '--durable-sends', '--events-delay-ms', '600000']);
    const firstUrl = await listening(first);
    const token = await accessToken(firstUrl);
    const sent: string[] = [];
    for (const trackingId of ['torn-1', 'torn-2']) {
      const answer = await post(firstUrl, '/message/template', token, otpSend('84987654321', { tracking_id: trackingId }));
      expect(answer.json.error).toBe(0);
      sent.push(answer.json.data.msg_id);
    }
    await first.kill();
    // What a crash halfway through writing a third send leaves (that send was never answered).
    appendFileSync(`${file}.sends`, '["0123456789abcdef0123","4318269720189301001","8498');

    const second = runCli(['--state-file', file, '--durable-sends', '--events-delay-ms', '600000']);
    try {
      const url = await listening(second);
      const known = await control(url, 'GET', '/messages');
      expect(known.json.messages.map((message: { msg_id: string }) => message.msg_id)).toEqual(sent);
      expect((await get(url, '/message/quota', token)).json.data.remainingQuota).toBe('4998');
    } finally {
      await second.kill();
    }
  });

  it('needs a state file', async () => {
    await expect(startSimulator({ eventsUrl: null, durableSends: true })).rejects.toThrow(/durableSends needs stateFile/);
    const run = runCli(['--durable-sends']);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('--durable-sends needs --state-file');
  });
});

describe('GET /_control/messages', () => {
  it('lists every message the platform knows, oldest first, with those kept from before a restart', async () => {
    const file = stateFile();
    // Deliveries far off, so every message still reads as not delivered.
    let sim: RunningSimulator = await start({ stateFile: file, eventsDelayMs: 60_000 });
    let token: string;
    try {
      token = await accessToken(sim.url);
      for (const trackingId of ['list-a', 'list-b']) {
        expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: trackingId }))).json.error).toBe(0);
      }
    } finally {
      await sim.close();
    }
    sim = await start({ stateFile: file, eventsDelayMs: 60_000 });
    try {
      expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'list-c' }))).json.error).toBe(0);

      const all = await control(sim.url, 'GET', '/messages');
      expect(all.json.count).toBe(3);
      expect(all.json.messages.map((message: { tracking_id: string }) => message.tracking_id)).toEqual(['list-a', 'list-b', 'list-c']);
      expect(all.json.messages[0]).toEqual({
        msg_id: expect.stringMatching(/^[0-9a-f]{20}$/),
        oa_id: OA_ID,
        recipient: '84987654321',
        tracking_id: 'list-a',
        sent_time: expect.any(Number),
        delivery_time: null,
        status: 0,
        never_delivered: false,
      });
      expect((await control(sim.url, 'GET', '/messages?tracking_id=list-b')).json).toMatchObject({ count: 1, messages: [{ tracking_id: 'list-b' }] });
      expect((await control(sim.url, 'GET', '/messages?oa_id=0')).json).toEqual({ count: 0, messages: [] });
      expect(sim.control.messages().map((message) => message.tracking_id)).toEqual(['list-a', 'list-b', 'list-c']);
    } finally {
      await sim.close();
    }
  });
});
