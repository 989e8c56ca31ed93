/**
 * Shared by the webhook suites: a real customer receiver (node:http on a loopback port) that keeps
 * every request's raw bytes and checks signatures on its own (node:crypto, not our code), and the
 * whole delivery chain around a gateway: the ZNS simulator, the demo sender account and templates,
 * an API key with a webhook URL. Messages reach `delivered` the real way: the gateway's dispatcher
 * sends them to the simulator, which posts its signed delivery event back to the gateway.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import forge from 'node-forge';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { startTestGateway, type StoreKind, type TestGateway, type TestResponse } from '../harness.ts';

export const OTP_TEMPLATE = '250002';

/** Short retry delays (the contract's are 1 s, 5 s, 30 s, 2 min, 10 min) and a short timeout, for tests. */
export const TEST_RETRY_DELAYS_MS = [100, 200, 300, 400, 500];
export const TEST_WEBHOOK_ENV: Record<string, string> = {
  TMS_WEBHOOK_RETRY_DELAYS_MS: TEST_RETRY_DELAYS_MS.join(','),
  TMS_WEBHOOK_TIMEOUT_MS: '1000',
  TMS_WEBHOOK_LEASE_MS: '5000',
  TMS_WEBHOOK_POLL_MS: '20',
  TMS_DISPATCH_POLL_MS: '20',
  TMS_DISPATCH_LEASE_MS: '2000',
  TMS_DISPATCH_BACKOFF_MS: '20',
};

export interface ReceivedHook {
  /** The exact bytes received. */
  raw: Buffer;
  headers: IncomingHttpHeaders;
  path: string;
  /** Date.now() when the request's body was complete. */
  at: number;
  /** 0 for the first request this receiver saw. */
  index: number;
}

/** What the receiver does with a request: answer (after a delay), hang until closed, or drop the connection. */
export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | { hang: true } | { drop: true };
export type Responder = (hook: ReceivedHook) => Reply;

export interface Receiver {
  readonly port: number;
  url(path?: string): string;
  readonly hooks: ReceivedHook[];
  /** Requests being answered right now, and the most there ever were at once. */
  readonly concurrency: { now: number; max: number };
  respond(responder: Responder): void;
  close(): Promise<void>;
}

const OK: Responder = () => ({ status: 200, body: 'ok' });

export async function startReceiver(responder: Responder = OK): Promise<Receiver> {
  let respond = responder;
  const hooks: ReceivedHook[] = [];
  const concurrency = { now: 0, max: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const hook: ReceivedHook = { raw: Buffer.concat(chunks), headers: request.headers, path: request.url ?? '', at: Date.now(), index: hooks.length };
      hooks.push(hook);
      concurrency.now += 1;
      concurrency.max = Math.max(concurrency.max, concurrency.now);
      response.on('close', () => (concurrency.now -= 1));
      const reply = respond(hook);
      if ('hang' in reply) return;
      if ('drop' in reply) {
        request.socket.destroy();
        return;
      }
      const answer = () => response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers }).end(reply.body ?? '');
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    hooks,
    concurrency,
    respond: (next) => {
      respond = next;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * What a customer's receiver does (README example): HMAC-SHA256 of the raw bytes with the API
 * key, compared in constant time with X-Gateway-Signature; only then is the body parsed.
 */
export function verifyHook(hook: ReceivedHook, apiKey: string): Record<string, unknown> {
  const presented = Buffer.from(String(hook.headers['x-gateway-signature'] ?? ''), 'utf8');
  const expected = Buffer.from(createHmac('sha256', apiKey).update(hook.raw).digest('hex'), 'utf8');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw new Error(`bad signature on ${hook.raw.toString('utf8')}`);
  return JSON.parse(hook.raw.toString('utf8')) as Record<string, unknown>;
}

export function messageIdOf(hook: ReceivedHook): string {
  return String((JSON.parse(hook.raw.toString('utf8')) as { message_id?: unknown }).message_id);
}

export { waitFor } from '../wait-for.ts';

export function encryptPhone(phone: string, publicKeyPem: string): string {
  const key = forge.pki.publicKeyFromPem(publicKeyPem);
  const encrypted = key.encrypt(phone, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha1.create() } });
  return forge.util.encode64(encrypted);
}

export function expectOk(response: TestResponse, what: string): TestResponse {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${response.text}`);
  return response;
}

export interface Admin {
  admin(method: string, path: string, body?: unknown): Promise<TestResponse>;
}

/** The demo sender account (with its OA secret, so events verify) and templates, in a new workspace. */
export async function seedDemoWorkspace(gateway: Admin): Promise<string> {
  const workspaceId = expectOk(await gateway.admin('POST', '/workspaces', { name: 'webhooks' }), 'create workspace').body.id as string;
  expectOk(await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 100_000_000 }), 'top up');
  const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
  expectOk(await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, { ...account, daily_quota: 1_000_000 }), 'connect');
  for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
    expectOk(await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId }), 'template');
  }
  return workspaceId;
}

export interface HookKey {
  id: string;
  key: string;
}

export async function createHookKey(gateway: Admin, workspaceId: string, webhookUrl: string | null): Promise<HookKey> {
  const body = expectOk(
    await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'], webhook_url: webhookUrl }),
    'create key',
  ).body;
  return { id: body.id, key: body.key };
}

/** A simulator whose events go nowhere yet (point them at a gateway with eventsTo). */
export async function startQuietSimulator(): Promise<RunningSimulator> {
  // ZNS retries an event for an hour; compressed, the ladder still outlasts a gateway's restart on a busy machine.
  const simulator = await startSimulator({ eventsUrl: null, settings: { events: { delay_ms: 10, retry_delays_ms: [200, 500, 1000, 2000, 4000, 8000, 15000, 30000], max_in_flight: 64 } } });
  simulator.control.setRecipientRules([]);
  return simulator;
}

export function eventsTo(simulator: RunningSimulator, gatewayUrl: string): void {
  simulator.control.setEvents({ url: `${gatewayUrl}/platform/zns/events` });
}

export interface WebhookStack {
  gateway: TestGateway;
  simulator: RunningSimulator;
  workspaceId: string;
  /** A key whose webhook URL is the receiver's. */
  key: HookKey;
  receiver: Receiver;
  /** Accepts one message through the public API with this key (default: the stack's), returns its msg_id. */
  send(body?: Record<string, unknown>, key?: HookKey): Promise<string>;
  /** Accepts one RSA message (phone encrypted with the simulator's key for the OA). */
  sendRsa(trackingId: string, key?: HookKey): Promise<string>;
  message(id: string, key?: HookKey): Promise<any>;
  close(): Promise<void>;
}

let phoneCounter = 0;
export function nextPhone(): string {
  phoneCounter += 1;
  return `0912${String(100_000 + (phoneCounter % 900_000)).padStart(6, '0')}`;
}

/** Simulator, gateway (API and workers, in process), receiver, demo workspace and a key with a webhook. */
export async function startWebhookStack(
  kind: StoreKind,
  options: { env?: Record<string, string>; responder?: Responder; keyUrl?: (receiver: Receiver) => string } = {},
): Promise<WebhookStack> {
  const simulator = await startQuietSimulator();
  const receiver = await startReceiver(options.responder);
  const gateway = await startTestGateway(kind, {
    worker: true,
    env: { ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url, ...TEST_WEBHOOK_ENV, ...options.env },
  });
  eventsTo(simulator, gateway.url);
  const workspaceId = await seedDemoWorkspace(gateway);
  const key = await createHookKey(gateway, workspaceId, options.keyUrl ? options.keyUrl(receiver) : receiver.url());
  const stack: WebhookStack = {
    gateway,
    simulator,
    workspaceId,
    key,
    receiver,
    send: async (body = {}, sendKey = key) => {
      const response = await gateway.request('POST', '/api/v1/messages/send', {
        key: sendKey.key,
        body: { template_id: OTP_TEMPLATE, phone: nextPhone(), template_data: { otp: '123456' }, ...body },
      });
      return expectOk(response, 'send').body.msg_id as string;
    },
    sendRsa: async (trackingId, sendKey = key) => {
      const publicKey = simulator.control.rsaPublicKey(DEMO_SENDER_ACCOUNT.oa_id)!.pem;
      const response = await gateway.request('POST', '/api/v1/messages/rsa', {
        key: sendKey.key,
        body: { template_id: OTP_TEMPLATE, recipients: [{ rsa_phone: encryptPhone('84912345613', publicKey), template_data: { otp: '654321' }, tracking_id: trackingId }] },
      });
      expectOk(response, 'rsa');
      return response.body.results[0].msg_id as string;
    },
    message: async (id, readKey = key) => expectOk(await gateway.request('GET', `/api/v1/messages/${id}`, { key: readKey.key }), 'read message').body,
    close: async () => {
      await gateway.close();
      await simulator.close();
      await receiver.close();
    },
  };
  return stack;
}

/** The hooks a receiver got for one message. */
export function hooksFor(receiver: Receiver, messageId: string): ReceivedHook[] {
  return receiver.hooks.filter((hook) => messageIdOf(hook) === messageId);
}
