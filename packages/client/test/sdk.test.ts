/**
 * The SDK against the real gateway and simulator: every endpoint method, every error class, the
 * page iterator, reconcile, and RSA phone encryption that the simulator decrypts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, TmsError, encryptPhone, type MessageRecord } from '../src/index.ts';
import { oaId, orderTemplate, otpTemplate, startStack, stopAll, waitFor, type Stack, type Workspace } from './harness.ts';

let stack: Stack;
let main: Workspace; // OA 1
let other: Workspace; // OA 2: another workspace
let client: Client;

const MESSAGE_FIELDS = [
  'msg_id', 'tracking_id', 'status', 'phone', 'carrier', 'source', 'template_id', 'oa_id', 'provider_msg_id', 'error_code',
  'error_message', 'error_reason', 'scheduled_at', 'sent_at', 'delivered_at', 'failed_at', 'created_at',
].sort();

beforeAll(async () => {
  stack = await startStack({ oas: [{ n: 1, dailyQuota: 5000 }, { n: 2, dailyQuota: 5000 }, { n: 3, dailyQuota: 5000 }] });
  main = await stack.provision({ name: 'main', oas: [{ n: 1, dailyQuota: 5000 }] });
  other = await stack.provision({ name: 'other', oas: [{ n: 2, dailyQuota: 5000 }] });
  client = new Client({ apiKey: main.apiKey, baseUrl: stack.gatewayUrl });
});

afterAll(async () => {
  await stack?.close();
  await stopAll();
});

const otp = (otpValue = '123456') => ({ template_id: otpTemplate(1), template_data: { otp: otpValue } });
const settled = (id: string, statuses: string[] = ['sent', 'delivered', 'failed'], sdk: Client = client) =>
  waitFor(() => sdk.messages.get(id), (record) => statuses.includes(record.status), `message ${id} to settle`);

async function caught(promise: Promise<unknown>): Promise<TmsError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(TmsError);
  return error as TmsError;
}

describe('catalog', () => {
  it('lists templates with their params, filtered by status and sender account', async () => {
    const all = await client.templates.list();
    expect(all.count).toBe(2);
    const template = all.templates.find((t) => t.template_id === otpTemplate(1))!;
    expect(template).toMatchObject({ status: 'ENABLE', oa_id: oaId(1), oa_name: 'Test OA 1', template_type: 2, name: 'One-time password' });
    expect(template.params).toEqual([{ name: 'otp', type: 'STRING', required: true, min_length: 4, max_length: 10 }]);
    expect((await client.templates.list({ status: 'DISABLE' })).templates).toEqual([]);
    expect((await client.templates.list({ oa_id: oaId(1) })).count).toBe(2);
  });

  it('lists the sender accounts of the workspace only', async () => {
    expect(await client.oas.list()).toEqual({ oas: [{ oa_id: oaId(1), name: 'Test OA 1' }], count: 1 });
  });

  it('reads the daily quota with its reset at midnight Vietnam time', async () => {
    const { quotas, count } = await client.quota.get();
    expect(count).toBe(1);
    expect(quotas[0]).toMatchObject({ oa_id: oaId(1), oa_name: 'Test OA 1', daily_quota: 5000, error: null });
    expect(quotas[0]!.reset_at).toMatch(/T00:00:00\.000\+07:00$/);
    expect(quotas[0]!.used + quotas[0]!.remaining).toBe(5000);
    expect((await client.quota.get({ oa_id: oaId(1) })).count).toBe(1);
  });
});

describe('messages', () => {
  it('sends one message, and reads its record field for field until it is delivered', async () => {
    const sent = await client.messages.send({ ...otp(), phone: '0912 345 678', tracking_id: 'order-1001' });
    expect(sent).toEqual({ msg_id: expect.stringMatching(/^msg_/), tracking_id: 'order-1001', status: 'queued', scheduled_at: null });
    const record = await settled(sent.msg_id, ['delivered', 'failed']);
    expect(Object.keys(record).sort()).toEqual(MESSAGE_FIELDS);
    expect(record).toMatchObject({
      msg_id: sent.msg_id,
      status: 'delivered',
      phone: '84912345678',
      carrier: 'Vinaphone',
      source: 'api',
      template_id: otpTemplate(1),
      oa_id: oaId(1),
      provider_msg_id: expect.any(String),
      error_code: null,
      delivered_at: expect.any(String),
    });
  });

  it('schedules a message, cancels it while queued, and then it is gone (404)', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const sent = await client.messages.send({ ...otp(), phone: '0912345601', send_at: sendAt });
    expect(Date.parse(sent.scheduled_at!)).toBe(Date.parse(sendAt));
    expect(await client.messages.cancel(sent.msg_id)).toEqual({ cancelled: true, msg_id: sent.msg_id });
    const error = await caught(client.messages.get(sent.msg_id));
    expect(error).toMatchObject({ kind: 'not_found', status: 404, code: 404 });
  });

  it('sends a batch and reports each recipient, the invalid ones as errors', async () => {
    const response = await client.messages.batch({
      template_id: orderTemplate(1),
      recipients: [
        { phone: '0912345602', tracking_id: 'b-1', template_data: { customer_name: 'An', order_code: 'A-1' } },
        { phone: '0912345603', tracking_id: 'b-2', template_data: { customer_name: 'Binh' } },
        { phone: '0912345604', template_data: { customer_name: 'Chi', order_code: 'A-3', note: 'gate 2' } },
      ],
    });
    expect(response).toMatchObject({ accepted: 2, total: 3, scheduled_at: null });
    expect(response.results[0]).toEqual({ phone: '84912345602', msg_id: expect.any(String), tracking_id: 'b-1', status: 'queued' });
    expect(response.results[1]).toMatchObject({ status: 'error', error: expect.stringMatching(/^invalid_template_data:/) });
    expect(response.results[1]!.msg_id).toBeUndefined();
    expect(response.results[2]).toMatchObject({ status: 'queued', msg_id: expect.any(String) });
  });

  it('lists with filters and walks every page with the async iterator, once each, even while new messages arrive', async () => {
    const sdk = new Client({ apiKey: other.apiKey, baseUrl: stack.gatewayUrl });
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) ids.push((await sdk.messages.send({ template_id: otpTemplate(2), template_data: { otp: '1234' }, phone: `091234570${i}`, tracking_id: `iter-${i}` })).msg_id);

    const page = await sdk.messages.list({ limit: 3 });
    expect(page).toMatchObject({ limit: 3, offset: 0, count: 3, has_more: true });
    expect(page.messages.map((m) => m.msg_id)).toEqual(ids.slice(-3).reverse());
    expect((await sdk.messages.list({ tracking_id: 'iter-4' })).messages.map((m) => m.msg_id)).toEqual([ids[4]]);
    expect((await sdk.messages.list({ phone: '0912345702' })).messages.map((m) => m.msg_id)).toEqual([ids[2]]);

    const walked: MessageRecord[] = [];
    let added = false;
    for await (const message of sdk.messages.iterate({ template_id: otpTemplate(2) }, { pageSize: 3 })) {
      walked.push(message);
      if (walked.length === 3 && !added) {
        // Newer messages shift the older ones to later offsets: the iterator must not repeat them.
        added = true;
        await sdk.messages.send({ template_id: otpTemplate(2), template_data: { otp: '1234' }, phone: '0912345790' });
        await sdk.messages.send({ template_id: otpTemplate(2), template_data: { otp: '1234' }, phone: '0912345791' });
      }
    }
    const walkedIds = walked.map((m) => m.msg_id);
    expect(new Set(walkedIds).size).toBe(walkedIds.length);
    expect(walkedIds).toEqual([...ids].reverse());
  });

  it('sends to an RSA-encrypted phone that the platform decrypts; the service never stores the number', async () => {
    const rsaPhone = await encryptPhone('0912 345 605', await stack.rsaPublicKey(1));
    expect(rsaPhone).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const response = await client.messages.sendRsa({ template_id: otpTemplate(1), recipients: [{ rsa_phone: rsaPhone, template_data: { otp: '7777' }, tracking_id: 'rsa-1' }] });
    expect(response).toMatchObject({ accepted: 1, total: 1 });
    expect(response.results[0]).not.toHaveProperty('phone');
    const record = await settled(response.results[0]!.msg_id!, ['delivered', 'failed']);
    expect(record).toMatchObject({ status: 'delivered', phone: null, carrier: null, error_code: null });
    const platform = await stack.control('GET', `/received?tracking_id=${record.msg_id}`);
    expect(platform.entries[0].response.error).toBe(0);
  });

  it('RSA under the wrong key is refused by the platform (-123) and fails', async () => {
    const rsaPhone = await encryptPhone('0912345606', await stack.rsaPublicKey(2));
    const response = await client.messages.sendRsa({ template_id: otpTemplate(1), recipients: [{ rsa_phone: rsaPhone, template_data: { otp: '7777' } }] });
    const record = await settled(response.results[0]!.msg_id!);
    expect(record).toMatchObject({ status: 'failed', error_code: -123 });
  });

  it('reconcile finds exactly the failed messages of a window, the ones no webhook reports', async () => {
    const sdk = new Client({ apiKey: other.apiKey, baseUrl: stack.gatewayUrl });
    const from = new Date(Date.now() - 1000);
    const failing = [await sdk.messages.send({ template_id: otpTemplate(2), template_data: { otp: '4321' }, phone: '0912345000', tracking_id: 'will-fail-1' })];
    failing.push(await sdk.messages.send({ template_id: otpTemplate(2), template_data: { otp: '4321' }, phone: '0912346000', tracking_id: 'will-fail-2' }));
    const fine = await sdk.messages.send({ template_id: otpTemplate(2), template_data: { otp: '4321' }, phone: '0912345607' });
    for (const { msg_id } of [...failing, fine]) await settled(msg_id, ['delivered', 'failed'], sdk);

    const seen: string[] = [];
    const report = await sdk.reconcile({ from, onFailed: (message) => void seen.push(message.msg_id) });
    expect(report.failed.map((m) => m.tracking_id).sort()).toEqual(['will-fail-1', 'will-fail-2']);
    expect(report.byErrorCode).toEqual({ '-118': 2 });
    expect(seen.sort()).toEqual(failing.map((m) => m.msg_id).sort());
    expect(report.failed[0]).toMatchObject({ status: 'failed', error_reason: expect.any(String), failed_at: expect.any(String) });
  });
});

describe('errors: one TmsError with the catalogued type, status, code, message, request id and retryAfter', () => {
  it('401 for a wrong key', async () => {
    const error = await caught(new Client({ apiKey: 'tms_live_wrong', baseUrl: stack.gatewayUrl }).templates.list());
    expect(error).toMatchObject({ type: 'unauthenticated', kind: 'unauthorized', status: 401, code: 401, method: 'GET', path: '/api/v1/templates', retryAfter: null });
    expect(error.message).not.toBe('');
    expect(error.requestId).toEqual(expect.any(String));
  });

  it('403 for a key without the scope', async () => {
    const key = await stack.admin('POST', `/workspaces/${main.id}/api-keys`, { scopes: ['messages:read'] });
    const error = await caught(new Client({ apiKey: key.key, baseUrl: stack.gatewayUrl }).messages.send({ ...otp(), phone: '0912345608' }));
    expect(error).toMatchObject({ type: 'forbidden_scope', kind: 'forbidden', status: 403, code: 403 });
  });

  it('404 for a message of another workspace', async () => {
    const theirs = await new Client({ apiKey: other.apiKey, baseUrl: stack.gatewayUrl }).messages.send({ template_id: otpTemplate(2), template_data: { otp: '1234' }, phone: '0912345609' });
    expect(await caught(client.messages.get(theirs.msg_id))).toMatchObject({ type: 'message_not_found', kind: 'not_found', status: 404 });
  });

  it('400 for a request the contract refuses, with the reason', async () => {
    const error = await caught(client.messages.send({ ...otp(), phone: '0912345610', tracking_id: 'has spaces' }));
    expect(error).toMatchObject({ type: 'invalid_tracking_id', kind: 'bad_request', status: 400, code: 400 });
    expect(error.message).not.toBe('');
    expect(await caught(client.messages.send({ template_id: otpTemplate(1), phone: '0912345611', template_data: { otp: '12' } }))).toMatchObject({ type: 'invalid_template_data', status: 400 });
  });

  it('402 when the wallet cannot pay', async () => {
    const poor = await stack.provision({ name: 'poor', balance: 100, oas: [{ n: 3, dailyQuota: 5000 }] });
    const error = await caught(new Client({ apiKey: poor.apiKey, baseUrl: stack.gatewayUrl }).messages.send({ template_id: otpTemplate(3), template_data: { otp: '1234' }, phone: '0912345612' }));
    expect(error).toMatchObject({ type: 'insufficient_balance', kind: 'payment_required', status: 402, code: 402, outcomeUnknown: false });
  });

  it('409 when cancelling a message that already left the queue', async () => {
    const sent = await client.messages.send({ ...otp(), phone: '0912345613' });
    await settled(sent.msg_id);
    expect(await caught(client.messages.cancel(sent.msg_id))).toMatchObject({ type: 'message_not_queued', kind: 'conflict', status: 409, code: 409, attempts: 1 });
  });

  it('413 for a body over the limit', async () => {
    const error = await caught(client.messages.send({ ...otp(), phone: '0912345614', template_data: { otp: 'x'.repeat(1_100_000) } }));
    expect(error).toMatchObject({ type: 'payload_too_large', kind: 'payload_too_large', status: 413 });
  });

  it('422 when an Idempotency-Key is reused for another request; the same request is answered again', async () => {
    const idempotencyKey = `reuse-${Date.now()}`;
    const first = await client.messages.send({ ...otp(), phone: '0912345615' }, { idempotencyKey });
    expect(await client.messages.send({ ...otp(), phone: '0912345615' }, { idempotencyKey })).toEqual(first);
    const error = await caught(client.messages.send({ ...otp(), phone: '0912345616' }, { idempotencyKey }));
    expect(error).toMatchObject({ type: 'idempotency_key_reused', kind: 'idempotency_mismatch', status: 422, idempotencyKey });
  });

  it('429 with retryAfter when retries are off; with retries the call waits as told and succeeds', async () => {
    const slow = await stack.admin('POST', `/workspaces/${main.id}/api-keys`, { scopes: ['templates:read'], rate_limit_per_second: 1 });
    const strict = new Client({ apiKey: slow.key, baseUrl: stack.gatewayUrl, maxRetries: 0 });
    let limited: TmsError | null = null;
    for (let i = 0; i < 5 && !limited; i += 1) limited = await strict.oas.list().then(() => null, (error: TmsError) => error);
    expect(limited).toMatchObject({ type: 'rate_limited', kind: 'rate_limited', status: 429, code: 429, retryAfter: expect.any(Number) });
    expect(limited!.retryAfter).toBeGreaterThanOrEqual(1);

    const waits: number[] = [];
    const patient = new Client({ apiKey: slow.key, baseUrl: stack.gatewayUrl, onRetry: (event) => void waits.push(event.delayMs) });
    for (let i = 0; i < 3; i += 1) expect((await patient.oas.list()).count).toBe(1);
    expect(waits.length).toBeGreaterThan(0);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
  });

  it('an aborted call rejects with the caller’s own abort reason and sends nothing', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user went away'));
    await expect(client.messages.send({ ...otp(), phone: '0912345617', tracking_id: 'aborted-1' }, { signal: controller.signal })).rejects.toThrow('user went away');
    expect((await client.messages.list({ tracking_id: 'aborted-1' })).count).toBe(0);
  });

  it('a network failure is a TmsError too (status 0, kind network) after the retries', async () => {
    const nowhere = new Client({ apiKey: main.apiKey, baseUrl: 'http://127.0.0.1:9', maxRetries: 1, retry: { baseDelayMs: 1 } });
    const error = await caught(nowhere.messages.send({ ...otp(), phone: '0912345618' }));
    expect(error).toMatchObject({ kind: 'network', type: null, status: 0, code: 0, attempts: 2, outcomeUnknown: true, idempotencyKey: expect.any(String) });
  });
});
