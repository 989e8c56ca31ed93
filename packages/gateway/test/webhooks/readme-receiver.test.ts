/**
 * The receiver example in the README is runnable and right: it is copied out of README.md, run
 * with node as a customer would run it, and receives real reports from the gateway; it refuses a
 * forged signature with 401 and handles a duplicate once. SQLite and PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, freePort } from '../harness.ts';
import { createHookKey, startWebhookStack, waitFor, type HookKey, type WebhookStack } from './support.ts';

const README = fileURLToPath(new URL('../../../../README.md', import.meta.url));

/** The ```js block of the README that starts with `// receiver.mjs`. */
function receiverExample(): string {
  const blocks = [...readFileSync(README, 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const example = blocks.find((block) => block.startsWith('// receiver.mjs'));
  if (!example) throw new Error('README.md has no ```js block starting with // receiver.mjs');
  return example;
}

describe.each(STORE_KINDS)('the README receiver example (%s)', (kind) => {
  let stack: WebhookStack;
  let key: HookKey;
  let child: ChildProcess;
  let output = '';
  let dir: string;
  let url: string;

  beforeAll(async () => {
    stack = await startWebhookStack(kind);
    const port = await freePort();
    url = `http://127.0.0.1:${port}/dlr`;
    key = await createHookKey(stack.gateway, stack.workspaceId, url);
    dir = mkdtempSync(join(tmpdir(), 'tms-receiver-'));
    writeFileSync(join(dir, 'receiver.mjs'), receiverExample());
    child = spawn(process.execPath, [join(dir, 'receiver.mjs')], { env: { PATH: process.env.PATH ?? '', TMS_API_KEY: key.key, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await waitFor(() => output, (text) => text.includes('receiver listening'), 'the receiver to listen');
  });
  afterAll(async () => {
    child?.kill();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('receives the reports of messages sent with its key', async () => {
    const ids = await Promise.all([stack.send({ tracking_id: 'readme-1' }, key), stack.send({ tracking_id: 'readme-2' }, key)]);
    await waitFor(() => output, (text) => ids.every((id) => text.includes(`delivered ${id}`)), 'both reports in its output');
    expect(output).toMatch(new RegExp(`delivered ${ids[0]} \\(readme-1\\) at \\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z`));
  });

  it('refuses a forged signature with 401 and handles a duplicate once', async () => {
    const body = JSON.stringify({ message_id: 'msg_README_DUPLICATE', client_req_id: 'dup', from: 'oa', to: null, status: 'SUCCESS', delivered_at: '2026-11-21T08:00:00.000Z', tracking_id: 'x' });
    const post = (signature: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-signature': signature }, body });
    expect((await post('0'.repeat(64))).status).toBe(401);
    expect((await post(createHmac('sha256', 'another key').update(body).digest('hex'))).status).toBe(401);
    const signature = createHmac('sha256', key.key).update(body).digest('hex');
    expect((await post(signature)).status).toBe(200);
    expect((await post(signature)).status).toBe(200);
    expect(output.split('delivered msg_README_DUPLICATE')).toHaveLength(2);
  });
});
