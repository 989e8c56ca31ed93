import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { OA_ID, accessToken, control, get, otpSend, post, start } from './helpers.ts';

describe('control API', () => {
  let sim: RunningSimulator;
  let token: string;
  beforeAll(async () => {
    sim = await start();
    token = await accessToken(sim.url);
  });
  afterAll(() => sim.close());

  it('logs every send request with path, body, response and time; filters; counts duplicates; clears', async () => {
    const t0 = Date.now();
    const a = otpSend('84987654321', { tracking_id: 'rcv-1' });
    await post(sim.url, '/message/template', token, a);
    await post(sim.url, '/message/template', token, a);
    await post(sim.url, '/message/template', token, otpSend('0987', { tracking_id: 'rcv-2' }));
    await post(sim.url, '/message/template/hashphone', token, { hash_phone: 'a'.repeat(64), template_id: '250002', template_data: { otp: '1234' }, tracking_id: 'rcv-3' });
    await post(sim.url, '/message/template', null, otpSend('84987654321', { tracking_id: 'rcv-4' }));
    await post(sim.url, '/message/template', token, '{oops');
    await get(sim.url, '/message/quota', token); // not a send: not logged

    const all = await control(sim.url, 'GET', '/received');
    expect(all.status).toBe(200);
    expect(all.json.count).toBe(6);
    const first = all.json.entries[0];
    expect(first).toMatchObject({ seq: 1, path: '/message/template', oa_id: OA_ID, tracking_id: 'rcv-1', body: a, http_status: 200, fault: null });
    expect(first.time).toBeGreaterThanOrEqual(t0);
    expect(first.response).toMatchObject({ error: 0, data: { msg_id: expect.stringMatching(/^[0-9a-f]{20}$/) } });
    expect(all.json.entries.map((e: { response: { error: number } }) => e.response.error)).toEqual([0, 0, -108, 0, -124, -122]);
    expect(all.json.entries[4].oa_id).toBeNull();
    expect(all.json.entries[5].body).toBe('{oops');

    const dup = await control(sim.url, 'GET', '/received?tracking_id=rcv-1');
    expect(dup.json.count).toBe(2);
    expect((await control(sim.url, 'GET', '/received?path=/message/template/hashphone')).json.count).toBe(1);
    expect((await control(sim.url, 'GET', '/received?since_seq=4&limit=1')).json.entries.map((e: { seq: number }) => e.seq)).toEqual([5]);
    expect((await control(sim.url, 'GET', '/received?limit=x')).status).toBe(400);

    const stats = (await control(sim.url, 'GET', '/stats')).json;
    expect(stats.sends).toMatchObject({ received: 6, accepted: 3, rejected: 3, duplicate_tracking_ids: 1, duplicate_accepts: 1 });
    expect(stats.sends.by_error).toEqual({ '-108': 1, '-124': 1, '-122': 1 });
    expect(stats.requests.by_route['POST /message/template']).toBe(5);
    expect(stats.requests.by_route['GET /message/quota']).toBe(1);
    expect(stats.received_log).toMatchObject({ size: 6, dropped: 0 });

    expect((await control(sim.url, 'DELETE', '/received')).status).toBe(204);
    expect((await control(sim.url, 'GET', '/received')).json.count).toBe(0);
    expect(sim.control.stats().sends.duplicate_tracking_ids).toBe(0);
  });

  it('reads and changes OAs, quotas, templates and messages', async () => {
    const oas = (await control(sim.url, 'GET', '/oas')).json;
    expect(oas).toHaveLength(1);
    expect(oas[0]).toMatchObject({ oa_id: OA_ID, name: 'TMS Demo Shop', app_id: '2074138120372622001', daily_quota: 5000, rsa_key: true });
    expect((await control(sim.url, 'GET', '/oas/nope')).status).toBe(404);
    expect((await control(sim.url, 'PUT', `/oas/${OA_ID}/quota`, { daily_quota: -1 })).status).toBe(400);
    expect((await control(sim.url, 'PUT', `/oas/${OA_ID}/quota`, { remaining_quota: 0 })).json.remaining_quota).toBe(0);
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(-144);
    expect((await control(sim.url, 'PUT', `/oas/${OA_ID}/quota`, { daily_quota: 5000, used_today: 0 })).json).toMatchObject({ remaining_quota: 5000 });

    expect((await control(sim.url, 'GET', '/templates/250001')).json).toMatchObject({ name: 'Order confirmation', status: 'ENABLE', price: '300' });
    expect((await control(sim.url, 'GET', '/templates/1')).status).toBe(404);
    expect((await control(sim.url, 'PUT', '/templates/250001', { status: 'BROKEN' })).status).toBe(400);
    expect((await control(sim.url, 'PUT', '/templates/1', { status: 'ENABLE' })).status).toBe(404);
    const changed = await control(sim.url, 'PUT', '/templates/250002', { params: [{ name: 'otp', required: true, min_length: 6, max_length: 6 }] });
    expect(changed.json.params).toEqual([{ name: 'otp', type: 'STRING', required: true, min_length: 6, max_length: 6, accept_null: false }]);
    expect((await post(sim.url, '/message/template', token, otpSend('84987654321', { template_data: { otp: '1234' } }))).json.error).toBe(-1121);
    const info = await get(sim.url, '/template/info/v2?template_id=250002', token);
    expect(info.json.data.listParams).toEqual([{ name: 'otp', require: true, type: 'STRING', maxLength: 6, minLength: 6, acceptNull: false }]);
    await control(sim.url, 'PUT', '/templates/250002', { params: [{ name: 'otp', required: true, min_length: 4, max_length: 10 }] });

    const sent = await post(sim.url, '/message/template', token, otpSend());
    const m = await control(sim.url, 'GET', `/messages/${sent.json.data.msg_id}`);
    expect(m.json).toMatchObject({ msg_id: sent.json.data.msg_id, oa_id: OA_ID, recipient: '84987654321', status: 0 });
    expect((await control(sim.url, 'GET', '/messages/ffffffffffffffffffff')).status).toBe(404);
  });

  it('changes recipient rules at run time', async () => {
    const put = await control(sim.url, 'PUT', '/recipient-rules', [{ suffix: '777', result: 'error', error: -141 }]);
    expect(put.status).toBe(200);
    expect((await post(sim.url, '/message/template', token, otpSend('84912345777'))).json).toEqual({ error: -141, message: 'Người dùng từ chối nhận ZNS từ Official Account', data: null });
    expect((await post(sim.url, '/message/template', token, otpSend('84912345000'))).json.error).toBe(0);
    expect((await control(sim.url, 'PUT', '/recipient-rules', [{ suffix: '1', result: 'error', error: -99999 }])).status).toBe(400);
    await control(sim.url, 'PUT', '/recipient-rules', { recipient_rules: [{ suffix: '000', result: 'error', error: -118 }, { suffix: '999', result: 'never_deliver' }] });
    expect((await post(sim.url, '/message/template', token, otpSend('84912345000'))).json.error).toBe(-118);
  });

  it('rejects malformed control bodies', async () => {
    const r = await fetch(`${sim.url}/_control/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(r.status).toBe(400);
  });

  it('reset clears counters, the received log and faults', async () => {
    sim.control.setFaults({ latency_ms: 5 });
    expect((await control(sim.url, 'POST', '/reset')).status).toBe(204);
    const s = sim.control.stats();
    expect(s.sends.received).toBe(0);
    expect(s.requests.total).toBe(0);
    expect(sim.control.received()).toHaveLength(0);
    expect(sim.control.getFaults().latency_ms).toBe(0);
  });
});

describe('received log limit', () => {
  it('keeps the newest entries and counts the dropped ones', async () => {
    const sim = await start({ settings: { received_limit: 3 } });
    try {
      const token = await accessToken(sim.url);
      for (let i = 1; i <= 5; i++) await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: `lim-${i}` }));
      expect(sim.control.received().map((e) => e.tracking_id)).toEqual(['lim-3', 'lim-4', 'lim-5']);
      expect(sim.control.stats().received_log).toEqual({ size: 3, limit: 3, dropped: 2 });
      expect(sim.control.stats().sends.accepted).toBe(5);
    } finally {
      await sim.close();
    }
  });
});
