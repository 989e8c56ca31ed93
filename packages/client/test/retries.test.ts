/**
 * Safe retries through a proxy that loses answers: the gateway accepts the first attempt, the
 * client never hears it and retries with the same Idempotency-Key, and the result is one message
 * and one charge, never two.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, TmsError, type RetryEvent } from '../src/index.ts';
import { startFaultyProxy, type FaultyProxy } from './faulty-proxy.ts';
import { otpTemplate, startStack, stopAll, type Stack, type Workspace } from './harness.ts';

const PRICE = 250; // the OTP template's price

let stack: Stack;
let workspace: Workspace;
let proxy: FaultyProxy;
let direct: Client;

beforeAll(async () => {
  stack = await startStack({ oas: [{ n: 1, dailyQuota: 5000 }, { n: 2, dailyQuota: 5000 }] });
  workspace = await stack.provision({ oas: [{ n: 1, dailyQuota: 5000 }] });
  proxy = await startFaultyProxy(stack.gatewayUrl);
  direct = new Client({ apiKey: workspace.apiKey, baseUrl: stack.gatewayUrl });
});

afterAll(async () => {
  await proxy?.close();
  await stack?.close();
  await stopAll();
});

afterEach(() => proxy.reset());

function throughProxy(events: RetryEvent[], options: { maxRetries?: number; timeoutMs?: number } = {}): Client {
  return new Client({ apiKey: workspace.apiKey, baseUrl: proxy.url, retry: { baseDelayMs: 20 }, onRetry: (event) => void events.push(event), ...options });
}

async function wallet(): Promise<{ balance: number; charges: number }> {
  const { balance, ledger } = await stack.admin('GET', `/workspaces/${workspace.id}/wallet?limit=500`);
  return { balance, charges: ledger.filter((entry: { kind: string }) => entry.kind === 'charge').length };
}

const messagesTracked = async (trackingId: string) => (await direct.messages.list({ tracking_id: trackingId })).messages;
const otp = { template_id: otpTemplate(1), template_data: { otp: '123456' } };

describe('retries never send or charge twice', () => {
  it('send: the first answer is lost after the gateway accepted; the retry gets the same message back', async () => {
    const before = await wallet();
    proxy.plan = ({ attempt }) => (attempt === 1 ? 'drop-response' : 'forward');
    const events: RetryEvent[] = [];
    const sent = await throughProxy(events).messages.send({ ...otp, phone: '0912345678', tracking_id: 'drop-send-1' });

    const posts = proxy.seen.filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0]!.headers['idempotency-key']).toEqual(expect.any(String));
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    expect(posts[1]!.body).toBe(posts[0]!.body);
    expect(events).toHaveLength(1);
    expect(events[0]!.error).toMatchObject({ kind: 'network', type: null, status: 0 });

    expect((await messagesTracked('drop-send-1')).map((m) => m.msg_id)).toEqual([sent.msg_id]);
    const after = await wallet();
    expect(after.charges - before.charges).toBe(1);
    expect(before.balance - after.balance).toBe(PRICE);
  });

  it('batch: a lost answer and a retry queue each recipient once, in one charge', async () => {
    const before = await wallet();
    proxy.plan = ({ attempt }) => (attempt === 1 ? 'drop-response' : 'forward');
    const recipients = [1, 2, 3].map((i) => ({ phone: `091234561${i}`, tracking_id: `drop-batch-${i}`, template_data: { otp: '123456' } }));
    const response = await throughProxy([]).messages.batch({ template_id: otpTemplate(1), recipients });
    expect(response).toMatchObject({ accepted: 3, total: 3 });
    for (const [i, recipient] of recipients.entries()) {
      expect((await messagesTracked(recipient.tracking_id)).map((m) => m.msg_id)).toEqual([response.results[i]!.msg_id]);
    }
    const after = await wallet();
    expect(after.charges - before.charges).toBe(1);
    expect(before.balance - after.balance).toBe(3 * PRICE);
  });

  it('cancel: a lost answer and a retry still report the cancellation (not 404), with one refund', async () => {
    const sent = await direct.messages.send({ ...otp, phone: '0912345620', send_at: new Date(Date.now() + 3_600_000).toISOString() });
    const before = await wallet();
    proxy.plan = ({ attempt }) => (attempt === 1 ? 'drop-response' : 'forward');
    expect(await throughProxy([]).messages.cancel(sent.msg_id)).toEqual({ cancelled: true, msg_id: sent.msg_id });
    expect((await wallet()).balance - before.balance).toBe(PRICE);
  });

  it('an answer held past the timeout is retried with the same key: one message', async () => {
    proxy.plan = ({ attempt }) => (attempt === 1 ? { holdResponseMs: 1500 } : 'forward');
    const events: RetryEvent[] = [];
    const sent = await throughProxy(events, { timeoutMs: 300 }).messages.send({ ...otp, phone: '0912345621', tracking_id: 'timeout-1' });
    expect(events[0]!.error).toMatchObject({ kind: 'timeout', type: null, status: 0 });
    expect((await messagesTracked('timeout-1')).map((m) => m.msg_id)).toEqual([sent.msg_id]);
  });

  it('a 503 from the way in is retried with backoff and the call succeeds', async () => {
    proxy.plan = ({ attempt }) => (attempt <= 2 ? 'answer-503' : 'forward');
    const events: RetryEvent[] = [];
    const list = await throughProxy(events).templates.list({}, { requestId: 'sdk-test-503' });
    expect(list.count).toBe(2);
    expect(proxy.seen.map((request) => request.headers['x-request-id'])).toEqual(['sdk-test-503', 'sdk-test-503', 'sdk-test-503']);
    expect(proxy.seen.every((request) => request.headers['idempotency-key'] === undefined)).toBe(true);
    expect(events.map((event) => [event.attempt, event.error.status, event.error.kind])).toEqual([
      [1, 503, 'server_error'],
      [2, 503, 'server_error'],
    ]);
  });

  it('when every answer is lost the call fails with its Idempotency-Key; resending with that key settles it without a duplicate', async () => {
    proxy.plan = () => 'drop-response';
    const error = await throughProxy([], { maxRetries: 2 })
      .messages.send({ ...otp, phone: '0912345622', tracking_id: 'lost-1' })
      .then(() => null, (reason: unknown) => reason as TmsError);
    expect(error).toBeInstanceOf(TmsError);
    expect(error).toMatchObject({ kind: 'network', attempts: 3, outcomeUnknown: true, idempotencyKey: expect.any(String) });
    const [first] = await messagesTracked('lost-1');
    expect(first).toBeDefined();

    const settled = await direct.messages.send({ ...otp, phone: '0912345622', tracking_id: 'lost-1' }, { idempotencyKey: error!.idempotencyKey! });
    expect(settled.msg_id).toBe(first!.msg_id);
    expect(await messagesTracked('lost-1')).toHaveLength(1);
  });

  it('an AbortSignal stops a call while it waits to retry', async () => {
    proxy.plan = () => 'answer-503';
    const controller = new AbortController();
    const client = new Client({
      apiKey: workspace.apiKey,
      baseUrl: proxy.url,
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
      onRetry: () => controller.abort(new Error('shutting down')),
    });
    await expect(client.templates.list({}, { signal: controller.signal })).rejects.toThrow('shutting down');
    expect(proxy.seen).toHaveLength(1);
  });

  it('a conflict with its own first attempt still in flight is retried by type, and the retry gets the first result', async () => {
    // The first attempt reaches the gateway and its answer is lost; the retry arrives while the
    // gateway is (as far as the client can tell) still working on it; the next one is answered.
    const inFlight = { error: { code: 409, type: 'idempotency_key_in_flight', message: 'still working on it' } };
    proxy.plan = ({ attempt }) => (attempt === 1 ? 'drop-response' : attempt === 2 ? { answer: { status: 409, body: inFlight } } : 'forward');
    const events: RetryEvent[] = [];
    const sent = await throughProxy(events).messages.send({ ...otp, phone: '0912345624', tracking_id: 'in-flight-1' });
    expect(events.map((event) => [event.attempt, event.error.type])).toEqual([
      [1, null],
      [2, 'idempotency_key_in_flight'],
    ]);
    const keys = new Set(proxy.seen.filter((request) => request.method === 'POST').map((request) => request.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect((await messagesTracked('in-flight-1')).map((m) => m.msg_id)).toEqual([sent.msg_id]);
  });

  it('any other conflict is final, whatever its message says', async () => {
    const notQueued = { error: { code: 409, type: 'message_not_queued', message: 'Idempotency-Key in progress (wording is not the contract)' } };
    proxy.plan = ({ attempt }) => (attempt === 1 ? 'answer-503' : { answer: { status: 409, body: notQueued } });
    const error = await throughProxy([])
      .messages.cancel('msg_01JUNKJUNKJUNKJUNKJUNKJUNK')
      .then(() => null, (reason: unknown) => reason as TmsError);
    expect(error).toMatchObject({ type: 'message_not_queued', kind: 'conflict', status: 409, attempts: 2 });
  });

  it('keeps an error type this SDK does not know yet, and has none for a body outside the contract', async () => {
    proxy.plan = () => ({ answer: { status: 400, body: { error: { code: 400, type: 'a_future_type', message: 'new' } } } });
    const future = await throughProxy([]).templates.list().then(() => null, (reason: unknown) => reason as TmsError);
    expect(future).toMatchObject({ status: 400, kind: 'bad_request', message: 'new' });
    expect(future!.type as string).toBe('a_future_type');
    proxy.plan = () => ({ answer: { status: 400, body: { message: 'not our shape' } } });
    expect(await throughProxy([]).templates.list().then(() => null, (reason: unknown) => reason as TmsError)).toMatchObject({ status: 400, type: null });
  });

  it('a refusal is final: a 402 is not retried', async () => {
    const poor = await stack.provision({ name: 'poor', balance: 100, oas: [{ n: 2, dailyQuota: 5000 }] });
    const events: RetryEvent[] = [];
    const error = await new Client({ apiKey: poor.apiKey, baseUrl: proxy.url, onRetry: (event) => void events.push(event) })
      .messages.send({ template_id: otpTemplate(2), template_data: { otp: '123456' }, phone: '0912345623' })
      .then(() => null, (reason: unknown) => reason as TmsError);
    expect(error).toMatchObject({ type: 'insufficient_balance', kind: 'payment_required', status: 402, attempts: 1, outcomeUnknown: false });
    expect(events).toHaveLength(0);
    expect(proxy.seen.filter((request) => request.method === 'POST')).toHaveLength(1);
  });
});
