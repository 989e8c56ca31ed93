/**
 * Delivery-report webhooks: verifyWebhook / parseDeliveryReport on every kind of raw body, then
 * against real reports the gateway sends when its messages are delivered: to a node:http receiver
 * built as the README shows, and to `tms-client listen`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, WebhookError, parseDeliveryReport, signWebhook, verifyWebhook, type DeliveryReport } from '../src/index.ts';
import { CLIENT_BIN, REPO_ROOT, childEnvironment, freePort, oaId, otpTemplate, startStack, stopAll, type Stack } from './harness.ts';

const KEY = 'tms_live_example_key_for_signing';
const BODY = '{"message_id":"msg_1","client_req_id":"order-1","from":"4318","to":"84912345678","status":"SUCCESS","delivered_at":"2026-11-21T08:00:00.000Z","tracking_id":"a4d0"}';
const sign = (body: string | Buffer, key = KEY) => createHmac('sha256', key).update(body).digest('hex');

describe('verifyWebhook', () => {
  it('accepts the HMAC-SHA256 of the raw body as a string, Buffer, Uint8Array or ArrayBuffer', async () => {
    const signature = sign(BODY);
    const buffer = Buffer.from(BODY);
    expect(await verifyWebhook(BODY, signature, KEY)).toBe(true);
    expect(await verifyWebhook(buffer, signature, KEY)).toBe(true);
    expect(await verifyWebhook(new Uint8Array(buffer), signature, KEY)).toBe(true);
    expect(await verifyWebhook(new TextEncoder().encode(BODY).buffer, signature, KEY)).toBe(true);
    // A Buffer that is a slice of a larger pool (what body parsers hand over).
    const pooled = Buffer.concat([Buffer.from('xxxx'), buffer]).subarray(4);
    expect(await verifyWebhook(pooled, signature, KEY)).toBe(true);
    expect(await verifyWebhook(BODY, [signature], KEY)).toBe(true);
    expect(await signWebhook(BODY, KEY)).toBe(signature);
  });

  it('refuses a changed body, another key, re-serialised JSON, a missing, malformed or doubled header', async () => {
    const signature = sign(BODY);
    expect(await verifyWebhook(BODY.replace('84912345678', '84912345679'), signature, KEY)).toBe(false);
    expect(await verifyWebhook(BODY, signature, `${KEY}x`)).toBe(false);
    expect(await verifyWebhook(JSON.stringify(JSON.parse(BODY), null, 1), signature, KEY)).toBe(false);
    expect(await verifyWebhook(BODY, undefined, KEY)).toBe(false);
    expect(await verifyWebhook(BODY, '', KEY)).toBe(false);
    expect(await verifyWebhook(BODY, 'not hex', KEY)).toBe(false);
    expect(await verifyWebhook(BODY, signature.slice(0, 62), KEY)).toBe(false);
    expect(await verifyWebhook(BODY, [signature, signature], KEY)).toBe(false);
  });

  it('parseDeliveryReport returns the typed report, or a WebhookError with the status to answer', async () => {
    expect(await parseDeliveryReport(Buffer.from(BODY), sign(BODY), KEY)).toEqual(JSON.parse(BODY));
    const forged = await parseDeliveryReport(BODY, sign(BODY, 'other'), KEY).catch((error: unknown) => error);
    expect(forged).toBeInstanceOf(WebhookError);
    expect(forged).toMatchObject({ reason: 'invalid_signature', status: 401 });
    const notReport = '{"hello":"world"}';
    expect(await parseDeliveryReport(notReport, sign(notReport), KEY).catch((error: unknown) => error)).toMatchObject({ reason: 'malformed_report', status: 400 });
  });
});

// ---------------------------------------------------------------------------------------------
// Against the gateway's own reports (the webhook sender).

interface Received {
  raw: Buffer;
  signature: string | undefined;
  verified: boolean;
  report: DeliveryReport | null;
}

/** The README's node:http receiver: keep the raw bytes, verify, answer 401 or 200. */
function startReceiver(apiKey: string): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const signature = request.headers['x-gateway-signature'] as string | undefined;
      const verified = await verifyWebhook(raw, signature, apiKey);
      received.push({ raw, signature, verified, report: verified ? await parseDeliveryReport(raw, signature, apiKey) : null });
      response.writeHead(verified ? 200 : 401).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/dlr`, received })));
}

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('reports sent by the gateway', () => {
  let stack: Stack;
  let listener: ChildProcess | null = null;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | null = null;

  beforeAll(async () => {
    stack = await startStack({ oas: [{ n: 1, dailyQuota: 5000 }, { n: 2, dailyQuota: 5000 }] });
  });
  afterAll(async () => {
    listener?.kill('SIGTERM');
    receiver?.server.close();
    await stack?.close();
    await stopAll();
  });

  it('a node:http receiver verifies the signature of a real delivery report and reads it', async () => {
    // The key is the signing secret, and it is only known once created: create it, then point its webhook here.
    const workspace = await stack.provision({ name: 'webhooks', oas: [{ n: 1, dailyQuota: 5000 }] });
    receiver = await startReceiver(workspace.apiKey);
    await stack.admin('PATCH', `/api-keys/${workspace.keyId}`, { webhook_url: receiver.url });
    const client = new Client({ apiKey: workspace.apiKey, baseUrl: stack.gatewayUrl });

    const sent = await client.messages.send({ template_id: otpTemplate(1), template_data: { otp: '123456' }, phone: '0912345678', tracking_id: 'dlr-1' });
    const delivery = await until(() => receiver!.received.find((r) => r.report?.message_id === sent.msg_id || r.raw.includes(sent.msg_id)), 'the delivery report');

    expect(delivery.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(delivery.verified).toBe(true);
    const record = await client.messages.get(sent.msg_id);
    expect(delivery.report).toEqual({
      message_id: sent.msg_id,
      client_req_id: 'dlr-1',
      from: oaId(1),
      to: '84912345678',
      status: 'SUCCESS',
      delivered_at: record.delivered_at,
      tracking_id: record.provider_msg_id,
    });
    // The same bytes under another key, or changed by one byte, do not verify.
    expect(await verifyWebhook(delivery.raw, delivery.signature, 'tms_live_someone_else')).toBe(false);
    expect(await verifyWebhook(Buffer.from(delivery.raw.toString().replace('dlr-1', 'dlr-2')), delivery.signature, workspace.apiKey)).toBe(false);
  });

  it('tms-client listen verifies and prints each report, and refuses forged ones with 401', async () => {
    const workspace = await stack.provision({ name: 'listen', oas: [{ n: 2, dailyQuota: 5000 }] });
    const port = await freePort();
    listener = spawn(process.execPath, [CLIENT_BIN, 'listen', '--port', String(port), '--json'], {
      cwd: REPO_ROOT,
      env: childEnvironment({ TMS_API_KEY: workspace.apiKey }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    listener.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    listener.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await until(() => (stderr.includes('listening on') ? true : undefined), 'tms-client listen to start');
    const url = `http://127.0.0.1:${port}/`;

    const forged = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-signature': sign(BODY, 'not-the-key') }, body: BODY });
    expect(forged.status).toBe(401);

    await stack.admin('PATCH', `/api-keys/${workspace.keyId}`, { webhook_url: url });
    const client = new Client({ apiKey: workspace.apiKey, baseUrl: stack.gatewayUrl });
    const sent = await client.messages.send({ template_id: otpTemplate(2), template_data: { otp: '123456' }, phone: '0912345679', tracking_id: 'dlr-listen-1' });
    const line = await until(() => stdout.split('\n').find((row) => row.includes(sent.msg_id)), 'tms-client listen to print the report');
    expect(JSON.parse(line)).toMatchObject({ message_id: sent.msg_id, client_req_id: 'dlr-listen-1', from: oaId(2), to: '84912345679', status: 'SUCCESS', duplicate: false });
    expect(stderr).toContain('refused a request');
  });
});
