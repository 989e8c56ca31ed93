import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { OA_ID, accessToken, control, demoSeed, get, otpSend, post, start } from './helpers.ts';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

describe('send: /message/template', () => {
  let sim: RunningSimulator;
  let token: string;
  beforeAll(async () => {
    sim = await start();
    token = await accessToken(sim.url);
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.control.setQuota(OA_ID, { daily_quota: 5000, used_today: 0 });
  });

  it('answers success with the reference body shape and string types', async () => {
    const before = Date.now();
    const r = await post(sim.url, '/message/template', token, {
      phone: '84987654321',
      template_id: '250001',
      template_data: { customer_name: 'Nguyễn Văn A', order_code: 'DH-0001', amount: '150.000đ' },
      tracking_id: 'order-1',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(Object.keys(r.json)).toEqual(['error', 'message', 'data']);
    expect(r.json.error).toBe(0);
    expect(r.json.message).toBe('Success');
    const d = r.json.data;
    expect(Object.keys(d).sort()).toEqual(['msg_id', 'quota', 'sending_mode', 'sent_time']);
    expect(d.msg_id).toMatch(/^[0-9a-f]{20}$/);
    expect(typeof d.sent_time).toBe('string');
    expect(Number(d.sent_time)).toBeGreaterThanOrEqual(before);
    expect(d.sending_mode).toBe('1');
    expect(d.quota).toEqual({ dailyQuota: '5000', remainingQuota: '4999' });
    // msg ids are unique
    const r2 = await post(sim.url, '/message/template', token, otpSend());
    expect(r2.json.data.msg_id).not.toBe(d.msg_id);
    expect(r2.json.data.quota.remainingQuota).toBe('4998');
  });

  it('accepts a numeric template_id and a missing optional param', async () => {
    const r = await post(sim.url, '/message/template', token, {
      phone: '84987654321',
      template_id: 250003,
      template_data: { customer_name: 'An', appointment_time: '09:00 12/01' },
      tracking_id: 'appt-1',
    });
    expect(r.json.error).toBe(0);
  });

  it('answers -108 for a phone that is not 84 + 9 digits', async () => {
    for (const phone of ['0987654321', '+84987654321', '8498765432', '849876543210', '84 987654321', 'abc', '']) {
      const r = await post(sim.url, '/message/template', token, otpSend(phone));
      expect(r.json, phone).toEqual({ error: -108, message: 'Phone number invalid', data: null });
    }
    expect((await post(sim.url, '/message/template', token, otpSend(84987654321 as unknown as string))).json.error).toBe(-108);
    expect((await post(sim.url, '/message/template', token, { template_id: '250002', template_data: { otp: '1234' } })).json.error).toBe(-108);
  });

  it('answers -1122 for a missing required param and -1121 for a length outside the limits', async () => {
    const missing = await post(sim.url, '/message/template', token, { phone: '84987654321', template_id: '250001', template_data: { customer_name: 'A', order_code: 'X' }, tracking_id: 'p1' });
    expect(missing.json).toEqual({ error: -1122, message: 'Dữ liệu mẫu ZNS thiếu tham số', data: null });
    const empty = await post(sim.url, '/message/template', token, { phone: '84987654321', template_id: '250001', template_data: { customer_name: '', order_code: 'X', amount: '1' }, tracking_id: 'p2' });
    expect(empty.json.error).toBe(-1122);
    const long = await post(sim.url, '/message/template', token, otpSend('84987654321', { template_data: { otp: '12345678901' } }));
    expect(long.json).toEqual({ error: -1121, message: 'Dữ liệu tham số vượt quá giới hạn ký tự', data: null });
    const short = await post(sim.url, '/message/template', token, otpSend('84987654321', { template_data: { otp: '123' } }));
    expect(short.json.error).toBe(-1121);
    // exactly at the limits is fine; Vietnamese letters count as one character each
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { template_data: { otp: '1234567890' } }))).json.error).toBe(0);
    const name30 = 'Ồ'.repeat(30);
    expect((await post(sim.url, '/message/template', token, { phone: '84987654321', template_id: '250001', template_data: { customer_name: name30, order_code: 'X', amount: '1' }, tracking_id: 'p3' })).json.error).toBe(0);
    expect((await post(sim.url, '/message/template', token, { phone: '84987654321', template_id: '250001', template_data: { customer_name: `${name30}Ồ`, order_code: 'X', amount: '1' }, tracking_id: 'p4' })).json.error).toBe(-1121);
  });

  it('answers -111 without template_data, -1124 for a non-string value, -122 for a broken JSON body', async () => {
    expect((await post(sim.url, '/message/template', token, { phone: '84987654321', template_id: '250002', tracking_id: 'x' })).json.error).toBe(-111);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { template_data: { otp: { v: 1 } } }))).json.error).toBe(-1124);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { template_data: { otp: 123456 } }))).json.error).toBe(0);
    const broken = await post(sim.url, '/message/template', token, '{"phone":');
    expect(broken.status).toBe(200);
    expect(broken.json).toEqual({ error: -122, message: 'Body request không đúng định dạng JSON', data: null });
    const form = await fetch(`${sim.url}/message/template`, {
      method: 'POST',
      headers: { access_token: token, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'phone=84987654321&template_id=250002',
    });
    expect(await form.json()).toEqual({ error: -122, message: 'Body request không đúng định dạng JSON', data: null });
    expect((await post(sim.url, '/message/template', token, '[1,2]')).json.error).toBe(-122);
  });

  it('answers -109 for an unknown template and the status code for a template that is not ENABLE', async () => {
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { template_id: '999999' }))).json).toEqual({ error: -109, message: 'Template ID invalid', data: null });
    for (const status of ['PENDING_REVIEW', 'REJECT', 'DISABLE'] as const) {
      sim.control.updateTemplate('250002', { status });
      const r = await post(sim.url, '/message/template', token, otpSend());
      expect(r.json, status).toEqual({ error: -131, message: 'Mẫu ZNS chưa được phê duyệt', data: null });
    }
    sim.control.updateTemplate('250002', { status: 'DISABLE', quality: 'LOW' });
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(-146);
    const put = await control(sim.url, 'PUT', '/templates/250002', { status: 'ENABLE', quality: 'HIGH' });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ template_id: '250002', status: 'ENABLE', quality: 'HIGH' });
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(0);
  });

  it('answers -144 with its Vietnamese text when the daily quota is used up, and the quota endpoint agrees', async () => {
    sim.control.setQuota(OA_ID, { daily_quota: 2, used_today: 0 });
    const a = await post(sim.url, '/message/template', token, otpSend());
    expect(a.json.data.quota).toEqual({ dailyQuota: '2', remainingQuota: '1' });
    const b = await post(sim.url, '/message/template', token, otpSend());
    expect(b.json.data.quota).toEqual({ dailyQuota: '2', remainingQuota: '0' });
    const c = await post(sim.url, '/message/template', token, otpSend());
    expect(c.json).toEqual({ error: -144, message: 'OA đã vượt giới hạn gửi ZNS trong ngày', data: null });
    const q = await get(sim.url, '/message/quota', token);
    expect(q.json).toEqual({
      error: 0,
      message: 'success',
      data: {
        dailyQuota: '2',
        remainingQuota: '0',
        dailyQuotaPromotion: null,
        remainingQuotaPromotion: null,
        monthlyPromotionQuota: null,
        remainingMonthlyPromotionQuota: null,
        estimatedNextMonthPromotionQuota: null,
      },
    });
    // raising the quota through the control API lets sends through again
    const put = await control(sim.url, 'PUT', `/oas/${OA_ID}/quota`, { daily_quota: 10 });
    expect(put.json).toMatchObject({ daily_quota: 10, used_today: 2, remaining_quota: 8 });
    expect((await post(sim.url, '/message/template', token, otpSend())).json.data.quota).toEqual({ dailyQuota: '10', remainingQuota: '7' });
  });

  it('applies recipient rules: …000 is not a Zalo user, …999 is accepted but never delivered', async () => {
    const before = sim.control.getQuota(OA_ID).used_today;
    const r = await post(sim.url, '/message/template', token, otpSend('84912345000'));
    expect(r.json).toEqual({ error: -118, message: 'Zalo account not existed', data: null });
    expect(sim.control.getQuota(OA_ID).used_today).toBe(before);
    const n = await post(sim.url, '/message/template', token, otpSend('84912345999'));
    expect(n.json.error).toBe(0);
    expect(sim.control.message(n.json.data.msg_id)).toMatchObject({ never_delivered: true, status: 0 });
  });

  it('validates tracking_id length, mode and sending_mode', async () => {
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'x'.repeat(48) }))).json.error).toBe(0);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'x'.repeat(49) }))).json.error).toBe(-153);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { mode: 'production' }))).json.error).toBe(0);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { mode: 'sandbox' }))).json.error).toBe(-132);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { sending_mode: '2' }))).json.error).toBe(-161);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { sending_mode: '3' }))).json.error).toBe(-120);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { sending_mode: '1' }))).json.data.sending_mode).toBe('1');
  });

  it('development mode sends only to admins and answers msg_id + sent_time without using quota', async () => {
    const used = sim.control.getQuota(OA_ID).used_today;
    const ok = await post(sim.url, '/message/template', token, otpSend('84900000001', { mode: 'development' }));
    expect(ok.json.error).toBe(0);
    expect(Object.keys(ok.json.data).sort()).toEqual(['msg_id', 'sent_time']);
    expect(sim.control.getQuota(OA_ID).used_today).toBe(used);
    const no = await post(sim.url, '/message/template', token, otpSend('84987654321', { mode: 'development' }));
    expect(no.json.error).toBe(-127);
    // REDAI alias
    expect((await post(sim.url, '/message/template/dev', token, otpSend('84900000001'))).json.error).toBe(0);
  });

  it('message status: 0 before delivery, -1 for an unknown id, -107 for a malformed id', async () => {
    const n = await post(sim.url, '/message/template', token, otpSend('84912345999'));
    const id = n.json.data.msg_id as string;
    const s = await get(sim.url, `/message/status?message_id=${id}&phone=84912345999`, token);
    expect(s.json).toMatchObject({ error: 0, data: { status: 0, delivery_time: null } });
    const unknown = await get(sim.url, `/message/status?message_id=${'0'.repeat(20)}`, token);
    expect(unknown.json).toMatchObject({ error: 0, data: { status: -1 } });
    expect((await get(sim.url, `/message/status?message_id=${id}&phone=84900000002`, token)).json.data.status).toBe(-1);
    expect((await get(sim.url, '/message/status?message_id=xyz', token)).json.error).toBe(-107);
  });
});

describe('send: hashphone', () => {
  let sim: RunningSimulator;
  let token: string;
  beforeAll(async () => {
    const seed = demoSeed();
    seed.recipient_rules = [
      { suffix: '000', result: 'error', error: -118 },
      { hash_phones: [sha256('84911111000')], result: 'error', error: -118 },
    ];
    sim = await start({ seed });
    token = await accessToken(sim.url);
  });
  afterAll(() => sim.close());

  it('accepts a SHA-256 hex hash and answers like a normal send', async () => {
    const r = await post(sim.url, '/message/template/hashphone', token, { hash_phone: sha256('84987654321'), template_id: '250002', template_data: { otp: '8888' }, tracking_id: 'h1' });
    expect(r.json.error).toBe(0);
    expect(r.json.data.msg_id).toMatch(/^[0-9a-f]{20}$/);
    expect(r.json.data.quota).toEqual({ dailyQuota: '5000', remainingQuota: '4999' });
    expect(sim.control.message(r.json.data.msg_id)?.recipient).toBe(sha256('84987654321'));
    // upper-case hex is accepted; REDAI alias path works
    expect((await post(sim.url, '/message/template/hash_phone', token, { hash_phone: sha256('84987654321').toUpperCase(), template_id: '250002', template_data: { otp: '8888' } })).json.error).toBe(0);
  });

  it('answers -108 for a malformed hash and applies hash_phones rules', async () => {
    for (const hash_phone of ['84987654321', 'g'.repeat(64), sha256('x').slice(1)]) {
      expect((await post(sim.url, '/message/template/hashphone', token, { hash_phone, template_id: '250002', template_data: { otp: '8888' } })).json.error).toBe(-108);
    }
    expect((await post(sim.url, '/message/template/hashphone', token, { hash_phone: sha256('84911111000'), template_id: '250002', template_data: { otp: '8888' } })).json.error).toBe(-118);
  });
});

describe('quota day', () => {
  it('resets remaining quota at 00:00 Vietnam time (UTC+7)', async () => {
    // 16:59:00 UTC = 23:59 in Hanoi
    let now = Date.UTC(2026, 2, 1, 16, 59, 0);
    const seed = demoSeed();
    (seed.oas[0] as { daily_quota: number }).daily_quota = 1;
    const sim = await start({ seed, now: () => now });
    try {
      const token = await accessToken(sim.url);
      expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(0);
      expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(-144);
      now += 60_000; // 00:00 in Hanoi, still 1 March in UTC
      const r = await post(sim.url, '/message/template', token, otpSend());
      expect(r.json.error).toBe(0);
      expect(r.json.data.quota.remainingQuota).toBe('0');
      expect(sim.control.getQuota(OA_ID).vietnam_day).toBe('2026-03-02');
    } finally {
      await sim.close();
    }
  });
});
