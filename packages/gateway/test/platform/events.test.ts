/**
 * POST /platform/zns/events (README, Architecture, flow 3; docs/zns-platform.md): signed platform events mark
 * messages delivered, queue the customer's delivery report (contract §6) in the outbox and sync template
 * statuses. Events are signed here with the reference's formula and with the simulator's own signer, and
 * in the last suite the simulator really POSTs one. Direct store access is limited to test setup the public
 * API cannot express (moving a message to sent/sending/failed) and to reading the outbox, which has no API yet.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEMO_SEED_PATH, signEvent, startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { createKey, expectError, expectStatus, rsaCiphertext, unique } from '../api/helpers.ts';

const REPORT_KEYS = ['message_id', 'client_req_id', 'from', 'to', 'status', 'delivered_at', 'tracking_id'];

/** The reference's formula, written out independently of the gateway: plain SHA-256 of the concatenation. */
function referenceMac(first: string, rawBody: string, timestamp: string, secret: string): string {
  return createHash('sha256').update(first + rawBody + timestamp + secret).digest('hex');
}

function platformMsgId(): string {
  return randomBytes(10).toString('hex');
}

interface DeliveryFields {
  appId: string;
  oaId: string;
  msgId: string;
  trackingId?: string;
  deliveryTime?: string | null;
  phone?: string;
  timestamp?: string;
}

/** A user_received_message body as the platform writes it: every id and time a string. */
function deliveryEvent(fields: DeliveryFields): { raw: string; timestamp: string } {
  const timestamp = fields.timestamp ?? String(Date.now());
  const message: Record<string, string> = { msg_id: fields.msgId };
  if (fields.deliveryTime !== null) message.delivery_time = fields.deliveryTime ?? String(Date.now() - 1000);
  message.tracking_id = fields.trackingId ?? '';
  const raw = JSON.stringify({
    app_id: fields.appId,
    event_name: 'user_received_message',
    sender: { id: fields.oaId },
    recipient: { id: fields.phone ?? '84912345678' },
    message,
    timestamp,
  });
  return { raw, timestamp };
}

describe.each(STORE_KINDS)('POST /platform/zns/events (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let appId: string;
  let secret: string;
  /** A key of ws with a webhook URL: its delivered messages get an outbox row. */
  let hookKey: { id: string; key: string };
  const hookUrl = 'http://127.0.0.1:9/tms-hook';

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway);
    appId = `app-${ws.oaId}`;
    secret = `oa-secret-${randomBytes(8).toString('hex')}`;
    await connectWithSecret(ws.workspaceId, ws.oaId, appId, secret);
    hookKey = await createKey(gateway, ws.workspaceId, ['messages:send', 'messages:read', 'templates:read'], { webhook_url: hookUrl });
  });
  afterAll(async () => gateway?.close());

  const db = () => gateway.runtime.store.db;

  async function connectWithSecret(workspaceId: string, oaId: string, app: string, oaSecret: string | null): Promise<void> {
    const response = await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, {
      name: `OA ${oaId}`,
      daily_quota: 100_000,
      app_id: app,
      app_secret: 'app-secret',
      refresh_token: 'refresh-token',
      oa_secret_key: oaSecret,
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.has_oa_secret_key).toBe(oaSecret !== null);
  }

  /** Accepts a message through the public API with the given key. */
  async function accept(key: string, extra: Record<string, unknown> = {}): Promise<string> {
    const response = await gateway.request('POST', '/api/v1/messages/send', {
      key,
      body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA, ...extra },
    });
    expect(response.status, response.text).toBe(202);
    return response.body.msg_id as string;
  }

  /** Test setup: what the dispatcher records when the platform accepts the message. */
  async function markSent(msgId: string, providerMsgId: string | null, status: 'sent' | 'sending' | 'failed' = 'sent'): Promise<void> {
    const now = Date.now();
    const result = await db()
      .updateTable('message_states')
      .set({ status, provider_msg_id: providerMsgId, sent_at: status === 'sent' ? now : null, failed_at: status === 'failed' ? now : null })
      .where('id', '=', msgId)
      .executeTakeFirst();
    expect(Number(result.numUpdatedRows)).toBe(1);
  }

  function post(raw: string, headers: Record<string, string> = {}): Promise<TestResponse> {
    return gateway.request('POST', '/platform/zns/events', { rawBody: raw, headers: { 'content-type': 'application/json', ...headers } });
  }

  function postSigned(raw: string, timestamp: string, options: { first?: string; oaSecret?: string; prefix?: string } = {}): Promise<TestResponse> {
    const mac = referenceMac(options.first ?? appId, raw, timestamp, options.oaSecret ?? secret);
    return post(raw, { 'x-zevent-signature': `${options.prefix ?? 'mac='}${mac}` });
  }

  async function record(msgId: string, key = ws.apiKey) {
    const response = await gateway.request('GET', `/api/v1/messages/${msgId}`, { key });
    expectStatus(response, 200);
    return response.body;
  }

  async function outboxRows(msgId: string) {
    return db().selectFrom('webhook_deliveries').selectAll().where('message_id', '=', msgId).execute();
  }

  /** Rows of platform_events about one of our messages' delivery (earlier versions kept one per event). */
  async function platformEventRows(messageId: string) {
    return db().selectFrom('platform_events').selectAll().where('message_id', '=', messageId).where('event_name', '=', 'user_received_message').execute();
  }

  it('marks a sent message delivered at the event time and queues the exact delivery report (simulator signer)', async () => {
    const msgId = await accept(hookKey.key, { tracking_id: 'order-88213' });
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const deliveryTime = 1_767_200_401_234;
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, deliveryTime: String(deliveryTime) });
    const response = await post(raw, { 'x-zevent-signature': `mac=${signEvent(appId, raw, timestamp, secret)}` });
    expectStatus(response, 200);
    expect(response.body).toEqual({ ok: true });

    const message = await record(msgId, hookKey.key);
    expect(message).toMatchObject({ msg_id: msgId, status: 'delivered', provider_msg_id: providerId, delivered_at: '2025-12-31T17:00:01.234Z', tracking_id: 'order-88213' });

    const rows = await outboxRows(msgId);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({
      id: expect.stringMatching(/^dlv_/),
      workspace_id: ws.workspaceId,
      api_key_id: hookKey.id,
      url: hookUrl,
      status: 'pending',
      attempts: 0,
      lease_expires_at: null,
      last_error: null,
    });
    expect(typeof row.next_attempt_at).toBe('number');
    expect(row.created_at).toBe(row.next_attempt_at);
    const expected = {
      message_id: msgId,
      client_req_id: 'order-88213',
      from: ws.oaId,
      to: '84912345678',
      status: 'SUCCESS',
      delivered_at: '2025-12-31T17:00:01.234Z',
      tracking_id: providerId,
    };
    const parsed = JSON.parse(row.body);
    expect(Object.keys(parsed)).toEqual(REPORT_KEYS);
    expect(parsed).toEqual(expected);
    // Serialised once, compactly, in that order: the webhook sender resends these bytes.
    expect(row.body).toBe(JSON.stringify(expected));
  });

  it('accepts the signature without "mac=", in upper case, and with oa_id as the first term', async () => {
    for (const variant of [{ prefix: '' }, { prefix: 'MAC=', upper: true }, { first: ws.oaId }] as { prefix?: string; upper?: boolean; first?: string }[]) {
      const msgId = await accept(ws.apiKey);
      const providerId = platformMsgId();
      await markSent(msgId, providerId);
      const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId });
      let mac = referenceMac(variant.first ?? appId, raw, timestamp, secret);
      if (variant.upper) mac = mac.toUpperCase();
      const response = await post(raw, { 'x-zevent-signature': `${variant.prefix ?? 'mac='}${mac}` });
      expectStatus(response, 200);
      expect((await record(msgId)).status, JSON.stringify(variant)).toBe('delivered');
    }
  });

  it('applies a duplicate once: 200 again, one outbox row, delivered_at unchanged', async () => {
    const msgId = await accept(hookKey.key);
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const first = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, deliveryTime: '1767200401000' });
    expectStatus(await postSigned(first.raw, first.timestamp), 200);
    const before = await record(msgId);
    const outboxBefore = await outboxRows(msgId);

    // The platform's retry: the same bytes and signature.
    const retry = await postSigned(first.raw, first.timestamp);
    expectStatus(retry, 200);
    expect(retry.body).toEqual({ ok: true });
    // The same event re-sent with a later event timestamp and delivery time.
    const later = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, deliveryTime: '1767200999000' });
    expectStatus(await postSigned(later.raw, later.timestamp), 200);
    // Another platform msg_id for the same message (a resend): the message is already delivered.
    const other = deliveryEvent({ appId, oaId: ws.oaId, msgId: platformMsgId(), trackingId: msgId, deliveryTime: '1767201999000' });
    expectStatus(await postSigned(other.raw, other.timestamp), 200);

    const after = await record(msgId);
    expect(after).toEqual(before);
    expect(after.delivered_at).toBe('2025-12-31T17:00:01.000Z');
    const outboxAfter = await outboxRows(msgId);
    expect(outboxAfter).toHaveLength(1);
    expect(outboxAfter).toEqual(outboxBefore);
    // The message's state made the events idempotent: the store keeps no row per event.
    expect(await platformEventRows(msgId)).toHaveLength(0);
  });

  it('answers 401 in the error shape for a wrong signature, a missing header, an unknown OA or an OA without a secret; nothing changes', async () => {
    const msgId = await accept(hookKey.key);
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const before = await record(msgId);
    const event = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId });

    expectError(await postSigned(event.raw, event.timestamp, { oaSecret: 'not-the-secret' }), 'invalid_event_signature');
    expectError(await post(event.raw), 'invalid_event_signature');
    expectError(await post(event.raw, { 'x-zevent-signature': '' }), 'invalid_event_signature');
    expectError(await post(event.raw, { 'x-zevent-signature': 'mac=' }), 'invalid_event_signature');
    // The signature of other bytes: a body changed in transit (one more space) no longer matches.
    const mac = referenceMac(appId, event.raw, event.timestamp, secret);
    expectError(await post(event.raw.replace('"event_name":', '"event_name": '), { 'x-zevent-signature': `mac=${mac}` }), 'invalid_event_signature');
    // A signature made with another timestamp than the body's.
    expectError(await post(event.raw, { 'x-zevent-signature': `mac=${referenceMac(appId, event.raw, '1', secret)}` }), 'invalid_event_signature');
    // HMAC-SHA256 is not the platform's scheme.
    const hmac = createHmac('sha256', secret).update(appId + event.raw + event.timestamp).digest('hex');
    expectError(await post(event.raw, { 'x-zevent-signature': `mac=${hmac}` }), 'invalid_event_signature');

    // A sender account we do not have: its signature cannot be verified.
    const unknownOa = `oa-unknown-${randomBytes(4).toString('hex')}`;
    const foreign = deliveryEvent({ appId, oaId: unknownOa, msgId: providerId, trackingId: msgId });
    expectError(await postSigned(foreign.raw, foreign.timestamp), 'invalid_event_signature');
    // An event naming no sender account at all.
    const anonymous = JSON.stringify({ app_id: appId, event_name: 'user_received_message', message: { msg_id: providerId, delivery_time: '1767200401000', tracking_id: msgId }, timestamp: '1' });
    expectError(await postSigned(anonymous, '1'), 'invalid_event_signature');

    // A connected sender account without an OA secret key.
    const bare = await seedWorkspace(gateway);
    const bareMsg = await accept(bare.apiKey, { template_id: bare.templateId });
    await markSent(bareMsg, 'bare-provider-id');
    const bareEvent = deliveryEvent({ appId: `app-${bare.oaId}`, oaId: bare.oaId, msgId: 'bare-provider-id', trackingId: bareMsg });
    expectError(await postSigned(bareEvent.raw, bareEvent.timestamp, { first: `app-${bare.oaId}`, oaSecret: '' }), 'invalid_event_signature');
    expect((await record(bareMsg, bare.apiKey)).status).toBe('sent');

    expect(await record(msgId)).toEqual(before);
    expect(await outboxRows(msgId)).toHaveLength(0);
    expect(await platformEventRows(msgId)).toHaveLength(0);
  });

  it('answers 400 for a body that is not JSON or not an object, and keeps the raw bytes whatever the Content-Type', async () => {
    expectError(await post('{"app_id": '), 'invalid_json');
    expectError(await post('not json at all', { 'content-type': 'text/plain' }), 'invalid_json');
    expectError(await post(''), 'invalid_json');
    expectError(await post('[1,2]'), 'invalid_request');
    expectError(await gateway.request('POST', '/platform/zns/events'), 'invalid_request');

    // A signed event sent as text/plain is still read as JSON and verified over its exact bytes.
    const msgId = await accept(ws.apiKey);
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, phone: 'Nguyễn 84912345678' });
    const mac = referenceMac(appId, raw, timestamp, secret);
    expectStatus(await post(raw, { 'content-type': 'text/plain; charset=utf-8', 'x-zevent-signature': `mac=${mac}` }), 200);
    expect((await record(msgId)).status).toBe('delivered');

    // The rest of the app keeps its own parser: a text/plain body on the public API is still 415.
    const send = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
    expectError(send, 'unsupported_media_type');
  });

  it('never touches a failed message', async () => {
    const msgId = await accept(hookKey.key);
    const providerId = platformMsgId();
    await markSent(msgId, providerId, 'failed');
    const before = await record(msgId);
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId });
    const response = await postSigned(raw, timestamp);
    expectStatus(response, 200);
    expect(response.body).toEqual({ ok: true });
    const after = await record(msgId);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ status: 'failed', delivered_at: null });
    expect(await outboxRows(msgId)).toHaveLength(0);
  });

  it('answers 200 and changes nothing for a message that is not ours (or is another workspace\'s)', async () => {
    const providerId = platformMsgId();
    const eventsBefore = await db().selectFrom('platform_events').select('event_key').execute();
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: 'msg_00000000000000000000000000' });
    const response = await postSigned(raw, timestamp);
    expectStatus(response, 200);
    expect(response.body).toEqual({ ok: true });
    expect(await db().selectFrom('platform_events').select('event_key').execute()).toEqual(eventsBefore);

    // Another workspace's OA, correctly signed, cannot deliver this workspace's message.
    const other = await seedWorkspace(gateway);
    const otherApp = `app-${other.oaId}`;
    const otherSecret = 'other-oa-secret';
    await connectWithSecret(other.workspaceId, other.oaId, otherApp, otherSecret);
    const msgId = await accept(ws.apiKey);
    const ourProviderId = platformMsgId();
    await markSent(msgId, ourProviderId);
    const before = await record(msgId);
    for (const event of [
      deliveryEvent({ appId: otherApp, oaId: other.oaId, msgId: platformMsgId(), trackingId: msgId }),
      deliveryEvent({ appId: otherApp, oaId: other.oaId, msgId: ourProviderId, trackingId: '' }),
    ]) {
      expectStatus(await postSigned(event.raw, event.timestamp, { first: otherApp, oaSecret: otherSecret }), 200);
    }
    expect(await record(msgId)).toEqual(before);
  });

  it('finds the message by the platform msg_id when tracking_id does not name it', async () => {
    const msgId = await accept(ws.apiKey, { tracking_id: 'client-code-1' });
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: '', deliveryTime: '1767200402000' });
    expectStatus(await postSigned(raw, timestamp), 200);
    expect(await record(msgId)).toMatchObject({ status: 'delivered', delivered_at: '2025-12-31T17:00:02.000Z', provider_msg_id: providerId });
  });

  it('delivers a message the dispatcher has not recorded as sent yet (sending or queued) and takes the platform msg_id', async () => {
    for (const status of ['sending', 'queued'] as const) {
      const msgId = await accept(hookKey.key);
      if (status === 'sending') await markSent(msgId, null, 'sending');
      const providerId = platformMsgId();
      const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, deliveryTime: '1767200403000' });
      expectStatus(await postSigned(raw, timestamp), 200);
      expect(await record(msgId), status).toMatchObject({ status: 'delivered', provider_msg_id: providerId, delivered_at: '2025-12-31T17:00:03.000Z' });
      const rows = await outboxRows(msgId);
      expect(rows).toHaveLength(1);
      expect(JSON.parse(rows[0]!.body).tracking_id).toBe(providerId);
    }
  });

  it('keeps the provider_msg_id already recorded', async () => {
    const msgId = await accept(ws.apiKey);
    await markSent(msgId, 'recorded-provider-id');
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: platformMsgId(), trackingId: msgId });
    expectStatus(await postSigned(raw, timestamp), 200);
    expect(await record(msgId)).toMatchObject({ status: 'delivered', provider_msg_id: 'recorded-provider-id' });
  });

  it('reports an RSA message with "to": null and erases its ciphertext', async () => {
    const response = await gateway.request('POST', '/api/v1/messages/rsa', {
      key: hookKey.key,
      body: { template_id: ws.templateId, recipients: [{ rsa_phone: rsaCiphertext(256), template_data: VALID_DATA, tracking_id: 'rsa-report' }] },
    });
    expectStatus(response, 202);
    const msgId = response.body.results[0].msg_id as string;
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const { raw, timestamp } = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, deliveryTime: '1767200404000' });
    expectStatus(await postSigned(raw, timestamp), 200);
    expect(await record(msgId)).toMatchObject({ status: 'delivered', phone: null });
    const stored = await db().selectFrom('messages').select('rsa_phone').where('id', '=', msgId).executeTakeFirstOrThrow();
    expect(stored.rsa_phone).toBeNull();
    const rows = await outboxRows(msgId);
    expect(rows).toHaveLength(1);
    const body = JSON.parse(rows[0]!.body);
    expect(Object.keys(body)).toEqual(REPORT_KEYS);
    expect(body).toEqual({
      message_id: msgId,
      client_req_id: 'rsa-report',
      from: ws.oaId,
      to: null,
      status: 'SUCCESS',
      delivered_at: '2025-12-31T17:00:04.000Z',
      tracking_id: providerId,
    });
  });

  it('delivers without an outbox row when the key has no webhook URL or is revoked', async () => {
    // seedWorkspace's key has no webhook_url.
    const plainMsg = await accept(ws.apiKey);
    const plainProvider = platformMsgId();
    await markSent(plainMsg, plainProvider);
    const plain = deliveryEvent({ appId, oaId: ws.oaId, msgId: plainProvider, trackingId: plainMsg });
    expectStatus(await postSigned(plain.raw, plain.timestamp), 200);
    expect((await record(plainMsg)).status).toBe('delivered');
    expect(await outboxRows(plainMsg)).toHaveLength(0);

    const revocable = await createKey(gateway, ws.workspaceId, ['messages:send', 'messages:read'], { webhook_url: hookUrl });
    const revokedMsg = await accept(revocable.key);
    const revokedProvider = platformMsgId();
    await markSent(revokedMsg, revokedProvider);
    const revoke = await gateway.admin('POST', `/api-keys/${revocable.id}/revoke`);
    expect(revoke.status, revoke.text).toBeLessThan(300);
    const event = deliveryEvent({ appId, oaId: ws.oaId, msgId: revokedProvider, trackingId: revokedMsg });
    expectStatus(await postSigned(event.raw, event.timestamp), 200);
    expect((await record(revokedMsg)).status).toBe('delivered');
    expect(await outboxRows(revokedMsg)).toHaveLength(0);
  });

  it('ignores an OA chat receipt (no delivery_time) and events it does not act on', async () => {
    const msgId = await accept(hookKey.key);
    const providerId = platformMsgId();
    await markSent(msgId, providerId);
    const before = await record(msgId);
    const receipt = deliveryEvent({ appId, oaId: ws.oaId, msgId: providerId, trackingId: msgId, deliveryTime: null });
    expect(receipt.raw).not.toContain('delivery_time');
    const response = await postSigned(receipt.raw, receipt.timestamp);
    expectStatus(response, 200);
    expect(response.body).toEqual({ ok: true });

    const timestamp = String(Date.now());
    const feedback = JSON.stringify({ app_id: appId, oa_id: ws.oaId, event_name: 'user_feedback', message: { msg_id: providerId, rate: '5' }, timestamp });
    expectStatus(await postSigned(feedback, timestamp), 200);
    const unsigned = JSON.stringify({ app_id: appId, oa_id: ws.oaId, event_name: 'change_oa_daily_quota', timestamp });
    expectError(await post(unsigned), 'invalid_event_signature');

    expect(await record(msgId)).toEqual(before);
    expect(await outboxRows(msgId)).toHaveLength(0);
    expect(await platformEventRows(msgId)).toHaveLength(0);
  });

  it('syncs a template status from change_template_status, keeps the price, and a send with it is then 400', async () => {
    const statusEvent = (newStatus: string, prev: string) => {
      const timestamp = String(Date.now());
      const raw = JSON.stringify({
        oa_id: ws.oaId,
        app_id: appId,
        template_id: ws.templateId,
        event_name: 'change_template_status',
        status: { prev_status: prev, new_status: newStatus },
        reason: 'review',
        timestamp,
      });
      return { raw, timestamp };
    };
    const templateOf = async () => {
      const list = await gateway.request('GET', `/api/v1/templates?oa_id=${ws.oaId}`, { key: ws.apiKey });
      expectStatus(list, 200);
      return list.body.templates.find((template: { template_id: string }) => template.template_id === ws.templateId);
    };
    // The catalog cache is warm before the event: the event must invalidate it.
    expect((await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } })).status).toBe(202);

    const disable = statusEvent('DISABLE', 'ENABLE');
    const response = await postSigned(disable.raw, disable.timestamp);
    expectStatus(response, 200);
    expect(response.body).toEqual({ ok: true });
    expect(await templateOf()).toMatchObject({ status: 'DISABLE' });
    const price = await db().selectFrom('templates').select('price').where('template_id', '=', ws.templateId).executeTakeFirstOrThrow();
    expect(price.price).toBe(300);

    const send = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } });
    expectError(send, 'template_not_enabled', /DISABLE/);

    // Wrongly signed: nothing changes.
    const forged = statusEvent('ENABLE', 'DISABLE');
    expectError(await postSigned(forged.raw, forged.timestamp, { oaSecret: 'forged' }), 'invalid_event_signature');
    expect(await templateOf()).toMatchObject({ status: 'DISABLE' });

    // An unknown template or status is answered and ignored.
    const unknownTemplate = JSON.stringify({ oa_id: ws.oaId, app_id: appId, template_id: '999999', event_name: 'change_template_status', status: { prev_status: 'ENABLE', new_status: 'DISABLE' }, timestamp: '5' });
    expectStatus(await postSigned(unknownTemplate, '5'), 200);
    const oddStatus = statusEvent('SOMETHING_NEW', 'DISABLE');
    expectStatus(await postSigned(oddStatus.raw, oddStatus.timestamp), 200);
    expect(await templateOf()).toMatchObject({ status: 'DISABLE', price: 300 });

    const enable = statusEvent('ENABLE', 'DISABLE');
    expectStatus(await postSigned(enable.raw, enable.timestamp), 200);
    expect(await templateOf()).toMatchObject({ status: 'ENABLE', price: 300 });
    expect((await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, body: { template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA } })).status).toBe(202);
    // The old DISABLE event retried by the platform is not applied again.
    expectStatus(await postSigned(disable.raw, disable.timestamp), 200);
    expect(await templateOf()).toMatchObject({ status: 'ENABLE' });
  });

  it('is listed in the operator OpenAPI document without token security', async () => {
    const document = await gateway.request('GET', '/admin/v1/openapi.json', { key: gateway.config.adminToken! });
    expectStatus(document, 200);
    const operation = document.body.paths['/platform/zns/events'].post;
    expect(operation.security).toEqual([]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
  });
});

interface DemoSeed {
  oas: { oa_id: string; name: string; app_id: string; app_secret: string; oa_secret_key: string; refresh_token: string; daily_quota: number }[];
}

describe.each(STORE_KINDS)('delivery events from the simulator, end to end (%s)', (kind) => {
  let gateway: TestGateway;
  let simulator: RunningSimulator;
  const demo = (JSON.parse(readFileSync(DEMO_SEED_PATH, 'utf8')) as DemoSeed).oas[0]!;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    simulator = await startSimulator({ eventsUrl: `${gateway.url}/platform/zns/events`, eventsDelayMs: 20 });
  });
  afterAll(async () => {
    await simulator?.close();
    await gateway?.close();
  });

  it('the simulator POSTs a signed user_received_message and our message becomes delivered with a queued report', async () => {
    const workspace = await gateway.admin('POST', '/workspaces', { name: unique('e2e ') });
    expect(workspace.status, workspace.text).toBeLessThan(300);
    const workspaceId = workspace.body.id as string;
    expect((await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 100_000 })).status).toBeLessThan(300);
    const connect = await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${demo.oa_id}?verify=false`, {
      name: demo.name,
      daily_quota: demo.daily_quota,
      app_id: demo.app_id,
      app_secret: demo.app_secret,
      refresh_token: demo.refresh_token,
      oa_secret_key: demo.oa_secret_key,
    });
    expect(connect.status, connect.text).toBe(200);
    const template = await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/250001?verify=false`, {
      name: 'Order confirmation',
      status: 'ENABLE',
      template_type: 1,
      oa_id: demo.oa_id,
      price: 300,
      params: [
        { name: 'customer_name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
        { name: 'order_code', type: 'STRING', required: true, max_length: 30, min_length: 1 },
        { name: 'amount', type: 'STRING', required: true, max_length: 20, min_length: 1 },
      ],
    });
    expect(template.status, template.text).toBe(200);
    const key = await createKey(gateway, workspaceId, ['messages:send', 'messages:read'], { webhook_url: 'http://127.0.0.1:9/e2e-hook' });

    const templateData = { customer_name: 'Nguyễn Văn A', order_code: 'A-1', amount: '150000' };
    const accepted = await gateway.request('POST', '/api/v1/messages/send', {
      key: key.key,
      body: { template_id: '250001', phone: '0912345678', template_data: templateData, tracking_id: 'order-e2e' },
    });
    expectStatus(accepted, 202);
    const msgId = accepted.body.msg_id as string;

    // Stand in for the dispatcher: an access token from the simulator's OAuth endpoint, then its send
    // endpoint with our msg_id as the ZNS tracking_id, both over HTTP.
    const token = await fetch(`${simulator.url}/v4/oa/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', secret_key: demo.app_secret },
      body: new URLSearchParams({ app_id: demo.app_id, grant_type: 'refresh_token', refresh_token: demo.refresh_token }).toString(),
    });
    const tokenBody = (await token.json()) as { access_token?: string };
    expect(tokenBody.access_token, JSON.stringify(tokenBody)).toEqual(expect.any(String));
    const sent = await httpRequest(simulator.url, 'POST', '/message/template', {
      headers: { access_token: tokenBody.access_token! },
      body: { phone: '84912345678', template_id: '250001', template_data: templateData, tracking_id: msgId },
    });
    expect(sent.body, sent.text).toMatchObject({ error: 0, data: { msg_id: expect.stringMatching(/^[0-9a-f]{20}$/) } });
    const platformId = sent.body.data.msg_id as string;

    let message: any;
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const response = await gateway.request('GET', `/api/v1/messages/${msgId}`, { key: key.key });
      expectStatus(response, 200);
      message = response.body;
      if (message.status === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(message).toMatchObject({ msg_id: msgId, status: 'delivered', provider_msg_id: platformId, tracking_id: 'order-e2e' });
    expect(message.delivered_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const attempts = simulator.control.eventAttempts().filter((attempt) => attempt.msg_id === platformId);
    expect(attempts[0]).toMatchObject({ status: 200, ok: true });

    const rows = await gateway.runtime.store.db.selectFrom('webhook_deliveries').selectAll().where('message_id', '=', msgId).execute();
    expect(rows).toHaveLength(1);
    const body = JSON.parse(rows[0]!.body);
    expect(Object.keys(body)).toEqual(REPORT_KEYS);
    expect(body).toEqual({
      message_id: msgId,
      client_req_id: 'order-e2e',
      from: demo.oa_id,
      to: '84912345678',
      status: 'SUCCESS',
      delivered_at: message.delivered_at,
      tracking_id: platformId,
    });
  });
});
