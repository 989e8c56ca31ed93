/**
 * Dispatch end to end over real HTTP: the public API accepts, the worker claims and sends to the
 * ZNS simulator, outcomes come back as sent / failed (refunded) / retried. SQLite and PostgreSQL.
 */
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import forge from 'node-forge';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { waitFor as waitUntil } from '../wait-for.ts';

const OTP_TEMPLATE = '250002';

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

function encryptPhone(phone: string, publicKeyPem: string): string {
  const key = forge.pki.publicKeyFromPem(publicKeyPem);
  const encrypted = key.encrypt(phone, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha1.create() } });
  return forge.util.encode64(encrypted);
}

describe.each(STORE_KINDS)('dispatch to the platform (%s)', (kind) => {
  let simulator: RunningSimulator;
  let gateway: TestGateway;
  let workspaceId: string;
  let apiKey: string;

  beforeAll(async () => {
    simulator = await startSimulator({ eventsUrl: null });
    gateway = await startTestGateway(kind, {
      worker: true,
      env: { ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url, TMS_DISPATCH_POLL_MS: '20', TMS_DISPATCH_BACKOFF_MS: '20', TMS_DISPATCH_LEASE_MS: '2000', TMS_DISPATCH_UNCONFIRMED_GRACE_MS: '500', ZNS_TIMEOUT_MS: '1000' },
    });
    workspaceId = (await gateway.admin('POST', '/workspaces', { name: 'dispatch' })).body.id;
    await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 1_000_000 });
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key;
  });
  afterAll(async () => {
    await gateway?.close();
    await simulator?.close();
  });
  beforeEach(() => {
    simulator.control.clearFaults();
  });

  const send = async (body: Record<string, unknown>) => {
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: apiKey, body: { template_id: OTP_TEMPLATE, template_data: { otp: '123456' }, ...body } });
    expect(response.status, response.text).toBe(202);
    return response.body.msg_id as string;
  };
  const message = async (id: string) => (await gateway.request('GET', `/api/v1/messages/${id}`, { key: apiKey })).body;
  const settled = (id: string, statuses = ['sent', 'delivered', 'failed']) =>
    waitFor(() => message(id), (record) => statuses.includes(record.status), `message ${id} to leave the queue`);
  const balance = async () => (await gateway.admin('GET', `/workspaces/${workspaceId}/wallet`)).body.balance as number;

  it('hands a message to the platform: sent, with its provider id, exactly once', async () => {
    const id = await send({ phone: '0912345678' });
    const record = await settled(id);
    expect(record).toMatchObject({ status: 'sent', provider_msg_id: expect.stringMatching(/^[0-9a-f]{20}$/), sent_at: expect.any(String), error_code: null });
    const received = simulator.control.received({ tracking_id: id });
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toMatchObject({ phone: '84912345678', template_id: OTP_TEMPLATE, template_data: { otp: '123456' }, tracking_id: id });
  });

  it('ends in delivered: the platform sends its signed event and the message takes its delivery time', async () => {
    simulator.control.setEvents({ url: `${gateway.url}/platform/zns/events`, delay_ms: 50 });
    try {
      const id = await send({ phone: '0912345620' });
      const record = await settled(id, ['delivered', 'failed']);
      expect(record).toMatchObject({ status: 'delivered', provider_msg_id: expect.stringMatching(/^[0-9a-f]{20}$/), sent_at: expect.any(String) });
      const platformMessage = simulator.control.message(record.provider_msg_id)!;
      expect(Date.parse(record.delivered_at)).toBe(platformMessage.delivery_time);
    } finally {
      simulator.control.setEvents({ url: null });
    }
  });

  it('fails a wrong number with -108, its Vietnamese reason and a refund', async () => {
    const before = await balance();
    const id = await send({ phone: '012' });
    const record = await settled(id);
    expect(record).toMatchObject({ status: 'failed', error_code: -108, error_message: expect.any(String), error_reason: 'Số điện thoại không hợp lệ', failed_at: expect.any(String) });
    expect(await balance()).toBe(before);
  });

  it('fails a message whose template was disabled after acceptance, without sending it', async () => {
    const { oa_id: oaId } = DEMO_SENDER_ACCOUNT;
    const appointment = DEMO_TEMPLATES.find((template) => template.template_id === '250003')!;
    const id = await gateway.request('POST', '/api/v1/messages/send', {
      key: apiKey,
      body: { template_id: '250003', phone: '0912345670', template_data: { customer_name: 'An', appointment_time: '10:00' }, send_at: new Date(Date.now() + 1000).toISOString() },
    });
    expect(id.status).toBe(202);
    const { template_id: _templateId, ...body } = appointment;
    await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/250003?verify=false`, { ...body, oa_id: oaId, status: 'DISABLE' });
    const record = await settled(id.body.msg_id);
    expect(record).toMatchObject({ status: 'failed', error_code: -9001 });
    expect(simulator.control.received({ tracking_id: id.body.msg_id })).toHaveLength(0);
    await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/250003?verify=false`, { ...body, oa_id: oaId, status: 'ENABLE' });
  });

  it('fails with the platform code when the platform has disabled the template', async () => {
    simulator.control.updateTemplate('250001', { status: 'DISABLE' });
    try {
      const response = await gateway.request('POST', '/api/v1/messages/send', {
        key: apiKey,
        body: { template_id: '250001', phone: '0912345671', template_data: { customer_name: 'An', order_code: 'A1', amount: '10' } },
      });
      const record = await settled(response.body.msg_id);
      expect(record).toMatchObject({ status: 'failed', error_code: -131 });
    } finally {
      simulator.control.updateTemplate('250001', { status: 'ENABLE' });
    }
  });

  it('keeps messages queued through a platform outage and sends them after it', async () => {
    simulator.control.setFaults({ error_rate_5xx: 1, scope: 'send' });
    const ids = await Promise.all([0, 1, 2].map((index) => send({ phone: `091234560${index}` })));
    await waitFor(() => Promise.resolve(simulator.control.received({ tracking_id: ids[0] }).length), (count) => count >= 1, 'a failed attempt');
    expect((await message(ids[0]!)).status).not.toBe('failed');
    simulator.control.clearFaults();
    for (const id of ids) expect(await settled(id)).toMatchObject({ status: 'sent' });
  });

  it('fails a message after 5 attempts when the platform stays down, with a refund', async () => {
    const before = await balance();
    simulator.control.setFaults({ error_rate_5xx: 1, scope: 'send' });
    const id = await send({ phone: '0912345609' });
    const record = await settled(id, ['failed', 'sent']);
    expect(record).toMatchObject({ status: 'failed', error_code: -9003 });
    expect(simulator.control.received({ tracking_id: id })).toHaveLength(5);
    expect(await balance()).toBe(before);
  });

  it('refreshes an expired access token and sends (single-use refresh token)', async () => {
    await settled(await send({ phone: '0912345611' }));
    simulator.control.expireAccessTokens(DEMO_SENDER_ACCOUNT.oa_id);
    const record = await settled(await send({ phone: '0912345612' }));
    expect(record.status).toBe('sent');
  });

  it('sends an RSA message with the ciphertext and never stores the phone', async () => {
    const publicKey = simulator.control.rsaPublicKey(DEMO_SENDER_ACCOUNT.oa_id)!.pem;
    const response = await gateway.request('POST', '/api/v1/messages/rsa', {
      key: apiKey,
      body: { template_id: OTP_TEMPLATE, recipients: [{ rsa_phone: encryptPhone('84912345613', publicKey), template_data: { otp: '654321' } }] },
    });
    expect(response.body.accepted).toBe(1);
    const id = response.body.results[0].msg_id;
    expect(await settled(id)).toMatchObject({ status: 'sent', phone: null, carrier: null });
    const row = await gateway.runtime.store.db.selectFrom('messages').select(['phone', 'rsa_phone']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ phone: null, rsa_phone: null });
  });

  it('sends a hashphone message as the SHA-256 of the number', async () => {
    const id = await send({ phone: '0912345614', mode: 'hashphone' });
    expect(await settled(id)).toMatchObject({ status: 'sent', phone: '84912345614' });
    const body = simulator.control.received({ tracking_id: id })[0]!.body as Record<string, unknown>;
    expect(body.hash_phone).toMatch(/^[0-9a-f]{64}$/);
    expect(body).not.toHaveProperty('phone');
  });

  it('sends a scheduled message at its time, never a cancelled one', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const scheduled = await send({ phone: '0912345615', send_at: soon });
    const cancelled = await send({ phone: '0912345616', send_at: soon });
    expect((await gateway.request('POST', `/api/v1/messages/${cancelled}/cancel`, { key: apiKey })).status).toBe(200);
    expect((await message(scheduled)).status).toBe('queued');
    const record = await settled(scheduled);
    expect(record.status).toBe('sent');
    expect(Date.parse(record.sent_at)).toBeGreaterThanOrEqual(Date.parse(soon));
    expect(simulator.control.received({ tracking_id: cancelled })).toHaveLength(0);
  });

  it('sends again, once, a message whose worker died holding its claim when the platform shows no trace of it', async () => {
    const id = await send({ phone: '0912345617', send_at: new Date(Date.now() + 60_000).toISOString() });
    // Test setup: the row as a worker leaves it when it dies mid-round (claimed, lease run out).
    await gateway.runtime.store.db
      .updateTable('message_states')
      .set({ status: 'sending', attempts: 1, lease_expires_at: Date.now() - 1, due_at: Date.now() - 1 })
      .where('id', '=', id)
      .execute();
    // First it waits unconfirmed for a delivery event (the platform may have taken the send).
    await waitFor(
      () => gateway.runtime.store.db.selectFrom('message_states').select(['status', 'unconfirmed_since']).where('id', '=', id).executeTakeFirstOrThrow(),
      (row) => row.unconfirmed_since !== null,
      'the reconciler to mark the send unconfirmed',
    );
    const record = await settled(id);
    expect(record.status).toBe('sent');
    expect(simulator.control.received({ tracking_id: id })).toHaveLength(1);
  });

  it('exposes Prometheus metrics behind the operator token: outcomes, platform errors, latency and the queue', async () => {
    expect((await gateway.request('GET', '/metrics')).status).toBe(401);
    await send({ phone: '0912345621', send_at: new Date(Date.now() + 3_600_000).toISOString() });
    const response = await gateway.request('GET', '/metrics', { key: gateway.config.adminToken! });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const value = (line: RegExp) => Number(response.text.split('\n').find((row) => line.test(row))?.split(' ').pop());
    expect(value(/^tms_dispatch_outcomes_total\{outcome="sent"\}/)).toBeGreaterThanOrEqual(5);
    expect(value(/^tms_dispatch_outcomes_total\{outcome="failed"\}/)).toBeGreaterThanOrEqual(3);
    expect(value(/^tms_dispatch_outcomes_total\{outcome="retry"\}/)).toBeGreaterThanOrEqual(4);
    expect(value(/^tms_platform_errors_total\{code="-108",call="send"\}/)).toBeGreaterThanOrEqual(1);
    expect(value(/^tms_dispatch_latency_seconds_count/)).toBeGreaterThanOrEqual(5);
    expect(value(/^tms_messages_accepted_total\{path="send"\}/)).toBeGreaterThanOrEqual(10);
    expect(value(/^tms_queue_messages\{state="queued"\}/)).toBeGreaterThanOrEqual(1);
    expect(value(/^tms_queue_messages\{state="due"\}/)).toBe(0);
    expect(value(/^tms_queue_oldest_due_age_seconds/)).toBe(0);
  });
});
