import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { APP_ID, OA_ID, OA_SECRET_KEY, accessToken, control, eventReceiver, get, otpSend, post, sleep, start, until, type EventReceiver } from './helpers.ts';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Verifies X-ZEvent-Signature the way a receiver must: sha256(app_id + rawBody + timestamp + OA secret key). */
function signatureValid(raw: string, header: string | string[] | undefined): boolean {
  const body = JSON.parse(raw) as { app_id: string; timestamp: string };
  const mac = String(header ?? '').replace(/^mac=/, '');
  return mac === sha256(body.app_id + raw + body.timestamp + OA_SECRET_KEY);
}

describe('delivery events', () => {
  let sim: RunningSimulator;
  let token: string;
  let rx: EventReceiver;
  beforeAll(async () => {
    rx = await eventReceiver();
    sim = await start({ eventsUrl: rx.url, eventsDelayMs: 50, settings: { events: { retry_delays_ms: [100, 200, 300] } } });
    token = await accessToken(sim.url);
  });
  afterAll(async () => {
    await sim.close();
    await rx.close();
  });
  afterEach(() => {
    rx.events.length = 0;
    rx.respond = () => 200;
  });

  it('POSTs a signed user_received_message after the delay; status turns to delivered', async () => {
    const sent = await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'ev-1' }));
    const msgId = sent.json.data.msg_id as string;
    const [ev] = await rx.waitFor(1);
    expect(ev?.status).toBe(200);
    expect(ev?.headers['content-type']).toBe('application/json');
    expect(ev?.headers['x-zevent-signature']).toMatch(/^mac=[0-9a-f]{64}$/);
    expect(signatureValid(ev!.raw, ev!.headers['x-zevent-signature'])).toBe(true);
    expect(ev?.headers.num_retry).toBeUndefined();
    expect(ev?.body).toEqual({
      app_id: APP_ID,
      event_name: 'user_received_message',
      sender: { id: OA_ID },
      recipient: { id: '84987654321' },
      message: { msg_id: msgId, delivery_time: expect.stringMatching(/^\d{13}$/), tracking_id: 'ev-1' },
      timestamp: expect.stringMatching(/^\d{13}$/),
    });
    expect(Number(ev?.body.message.delivery_time)).toBeGreaterThanOrEqual(Number(sent.json.data.sent_time));
    const status = await get(sim.url, `/message/status?message_id=${msgId}`, token);
    expect(status.json).toEqual({
      error: 0,
      message: 'Success',
      data: { delivery_time: ev?.body.message.delivery_time, message: "The message was delivered to the user's phone", status: 1 },
    });
  });

  it('uses the hash as recipient.id for hashphone sends', async () => {
    const hash = sha256('84987654321');
    await post(sim.url, '/message/template/hashphone', token, { hash_phone: hash, template_id: '250002', template_data: { otp: '1111' }, tracking_id: 'ev-h' });
    const [ev] = await rx.waitFor(1);
    expect(ev?.body.recipient).toEqual({ id: hash });
    expect(signatureValid(ev!.raw, ev!.headers['x-zevent-signature'])).toBe(true);
  });

  it('retries a failing receiver with num_retry and the same signed body', async () => {
    rx.respond = (n) => (n < 2 ? 500 : 200);
    await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'ev-retry' }));
    const evs = await rx.waitFor(3);
    expect(evs.map((e) => e.status)).toEqual([500, 500, 200]);
    expect(evs.map((e) => e.headers.num_retry)).toEqual([undefined, '1', '2']);
    expect(new Set(evs.map((e) => e.raw)).size).toBe(1);
    expect(evs.every((e) => signatureValid(e.raw, e.headers['x-zevent-signature']))).toBe(true);
    await sleep(400);
    expect(rx.events).toHaveLength(3);
    const attempts = sim.control.eventAttempts().filter((a) => a.msg_id === evs[0]?.body.message.msg_id);
    expect(attempts.map((a) => a.ok)).toEqual([false, false, true]);
  });

  it('gives up after the last retry', async () => {
    rx.respond = () => 503;
    const before = sim.control.stats().events.gave_up;
    await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'ev-giveup' }));
    await rx.waitFor(4);
    await until(() => sim.control.stats().events.gave_up, (n) => n === before + 1);
    await sleep(400);
    expect(rx.events).toHaveLength(4);
  });

  it('never delivers …999 numbers and sends no event for rejected sends', async () => {
    const r = await post(sim.url, '/message/template', token, otpSend('84912345999', { tracking_id: 'ev-never' }));
    await post(sim.url, '/message/template', token, otpSend('84912345000', { tracking_id: 'ev-118' }));
    await sleep(300);
    expect(rx.events).toHaveLength(0);
    expect((await get(sim.url, `/message/status?message_id=${r.json.data.msg_id}`, token)).json.data.status).toBe(0);
  });

  it('drop_rate 1 delivers (status 1) but sends no event; URL and delay change through the control API', async () => {
    expect((await control(sim.url, 'PUT', '/events', { drop_rate: 1 })).json.drop_rate).toBe(1);
    const r = await post(sim.url, '/message/template', token, otpSend());
    const id = r.json.data.msg_id as string;
    await until(() => get(sim.url, `/message/status?message_id=${id}`, token), (s) => s.json.data.status === 1);
    await sleep(100);
    expect(rx.events).toHaveLength(0);

    const rx2 = await eventReceiver();
    try {
      const put = await control(sim.url, 'PUT', '/events', { drop_rate: 0, url: rx2.url, delay_ms: 10 });
      expect(put.json).toMatchObject({ url: rx2.url, delay_ms: 10, drop_rate: 0 });
      await post(sim.url, '/message/template', token, otpSend());
      await rx2.waitFor(1);
      expect(rx.events).toHaveLength(0);
    } finally {
      sim.control.setEvents({ url: rx.url, delay_ms: 50 });
      await rx2.close();
    }
    expect((await control(sim.url, 'PUT', '/events', { url: 'ftp://x' })).status).toBe(400);
  });
});
