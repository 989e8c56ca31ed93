// The state file: a restarted simulator continues where it stopped (tokens, quota, RSA key, messages).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { StateFileError, type RunningSimulator } from '../src/index.ts';
import { OA_ID, REFRESH_TOKEN, control, eventReceiver, get, otpSend, post, refresh, start, until } from './helpers.ts';

const BIN = fileURLToPath(new URL('../bin/tms-zns-sim.js', import.meta.url));
const dirs: string[] = [];
function stateFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'zns-sim-state-'));
  dirs.push(dir);
  return join(dir, 'zns-sim-state.json');
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('--state-file / stateFile', () => {
  it('keeps the rotated refresh token, access tokens, quota, RSA key and message status across a restart', async () => {
    const file = stateFile();
    let sim: RunningSimulator = await start({ stateFile: file });
    let accessToken: string;
    let refreshToken: string;
    let msgId: string;
    let publicKey: string;
    try {
      const pair = await refresh(sim.url, REFRESH_TOKEN);
      accessToken = pair.json.access_token;
      refreshToken = pair.json.refresh_token;
      const sent = await post(sim.url, '/message/template', accessToken, otpSend());
      expect(sent.json.error).toBe(0);
      msgId = sent.json.data.msg_id;
      publicKey = (await get(sim.url, '/rsa/key/get', accessToken)).json.data.public_key;
    } finally {
      await sim.close();
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);

    sim = await start({ stateFile: file });
    try {
      // The seed's token was spent before the restart and stays spent; the one issued last is the valid one.
      expect((await refresh(sim.url, REFRESH_TOKEN)).json.error).toBe(-14014);
      expect((await get(sim.url, '/message/quota', accessToken)).json.data).toMatchObject({ dailyQuota: '5000', remainingQuota: '4999' });
      expect((await get(sim.url, '/rsa/key/get', accessToken)).json.data.public_key).toBe(publicKey);
      const status = await until(
        () => get(sim.url, `/message/status?message_id=${msgId}`, accessToken),
        (r) => r.json.data.status === 1,
      );
      expect(status.json.data.delivery_time).toEqual(expect.any(String));
      const next = await refresh(sim.url, refreshToken);
      expect(next.json.access_token).toEqual(expect.any(String));
    } finally {
      await sim.close();
    }
  });

  it('delivers, after the restart, a message accepted shortly before the stop', async () => {
    const file = stateFile();
    const receiver = await eventReceiver();
    let sim = await start({ stateFile: file, eventsUrl: receiver.url, eventsDelayMs: 60_000 });
    let msgId: string;
    try {
      const pair = await refresh(sim.url, REFRESH_TOKEN);
      const sent = await post(sim.url, '/message/template', pair.json.access_token, otpSend());
      msgId = sent.json.data.msg_id;
    } finally {
      await sim.close();
    }
    expect(receiver.events).toHaveLength(0);
    sim = await start({ stateFile: file, eventsUrl: receiver.url, eventsDelayMs: 50 });
    try {
      const [event] = await receiver.waitFor(1);
      expect(event!.body.message.msg_id).toBe(msgId);
      expect(sim.control.message(msgId)).toMatchObject({ status: 1 });
    } finally {
      await sim.close();
      await receiver.close();
    }
  });

  it('has the new refresh token on disk before it answers the refresh', async () => {
    const file = stateFile();
    const sim = await start({ stateFile: file });
    try {
      const pair = await refresh(sim.url, REFRESH_TOKEN);
      const onDisk = JSON.parse(readFileSync(file, 'utf8'));
      expect(onDisk.oas.find((oa: { oa_id: string }) => oa.oa_id === OA_ID)).toMatchObject({
        refresh_token: pair.json.refresh_token,
        access_tokens: expect.arrayContaining([expect.objectContaining({ token: pair.json.access_token })]),
      });
    } finally {
      await sim.close();
    }
  });

  it('refuses a refresh it cannot store, and the old refresh token keeps working', async () => {
    const file = stateFile();
    const sim = await start({ stateFile: file });
    // The temp file of the next write cannot be created: a directory stands in its place.
    const blocker = `${file}.${process.pid}.tmp`;
    try {
      mkdirSync(blocker);
      const refused = await refresh(sim.url, REFRESH_TOKEN);
      expect(refused.status).toBe(500);
      expect(refused.json.access_token).toBeUndefined();
      expect(sim.control.oa(OA_ID).refresh_token).toBe(REFRESH_TOKEN);
      rmSync(blocker, { recursive: true });
      const pair = await refresh(sim.url, REFRESH_TOKEN);
      expect(pair.json.access_token).toEqual(expect.any(String));
    } finally {
      rmSync(blocker, { recursive: true, force: true });
      await sim.close();
    }
  });

  it('will not start on a damaged state file, and says how to recover', async () => {
    const file = stateFile();
    writeFileSync(file, '{"version":1,"oas":[{"oa_id":');
    await expect(start({ stateFile: file })).rejects.toThrow(StateFileError);
    await expect(start({ stateFile: file })).rejects.toThrow(/delete it to start from the seed/);
    writeFileSync(file, JSON.stringify({ version: 1, oas: [{ oa_id: OA_ID }], messages: [] }));
    await expect(start({ stateFile: file })).rejects.toThrow(/oas\[0\]\.refresh_token/);
  });

  it('the CLI keeps a refresh answered just before a SIGKILL', async () => {
    const file = stateFile();
    const run = async (): Promise<{ url: string; kill: () => Promise<void> }> => {
      const child = spawn(process.execPath, [BIN, '--port', '0', '--state-file', file], { stdio: ['ignore', 'pipe', 'inherit'] });
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /listening on (\S+)/.exec(out);
          if (found) resolve(found[1]!);
        });
        child.on('exit', (code) => reject(new Error(`tms-zns-sim exited ${code}: ${out}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      return { url, kill: () => (child.kill('SIGKILL'), exited) };
    };
    const first = await run();
    const pair = await refresh(first.url, REFRESH_TOKEN);
    await first.kill();
    const second = await run();
    try {
      expect((await refresh(second.url, REFRESH_TOKEN)).json.error).toBe(-14014);
      expect((await get(second.url, '/message/quota', pair.json.access_token)).json.error).toBe(0);
      expect((await refresh(second.url, pair.json.refresh_token)).json.access_token).toEqual(expect.any(String));
      expect((await control(second.url, 'GET', `/oas/${OA_ID}`)).json.access_tokens_valid).toBe(2);
    } finally {
      await second.kill();
    }
  });
});
