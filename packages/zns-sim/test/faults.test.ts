import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { accessToken, control, get, otpSend, post, refresh, sleep, start } from './helpers.ts';

describe('fault injection', () => {
  let sim: RunningSimulator;
  let token: string;
  beforeAll(async () => {
    sim = await start();
    token = await accessToken(sim.url);
  });
  afterAll(() => sim.close());
  afterEach(() => {
    sim.control.reset();
  });

  it('error_rate_5xx 1 answers every business call with an HTML 503; the OAuth host is out of scope by default', async () => {
    expect((await control(sim.url, 'PUT', '/faults', { error_rate_5xx: 1 })).json.error_rate_5xx).toBe(1);
    const r = await post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'f-5xx' }));
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.text).toContain('503 Service Unavailable');
    expect((await get(sim.url, '/message/quota', token)).status).toBe(503);
    const rt = sim.control.oa('4318269720189301001').refresh_token as string;
    const t = await refresh(sim.url, rt);
    expect(t.json.access_token).toEqual(expect.any(String));
    token = t.json.access_token;
    // nothing was processed
    const log = sim.control.received({ tracking_id: 'f-5xx' });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ http_status: 503, fault: 'http_5xx', response: null });
    expect(sim.control.stats().sends.accepted).toBe(0);
    expect(sim.control.stats().faults.http_5xx).toBe(2);
  });

  it('a 5xx share answers roughly that share of requests', async () => {
    sim.control.setFaults({ error_rate_5xx: 0.3 });
    const statuses = await Promise.all(Array.from({ length: 300 }, () => post(sim.url, '/message/template', token, otpSend()).then((r) => r.status)));
    const failed = statuses.filter((s) => s === 503).length;
    expect(failed).toBeGreaterThan(45);
    expect(failed).toBeLessThan(135);
    expect(statuses.filter((s) => s === 200).length).toBe(300 - failed);
    expect(sim.control.stats().sends.accepted).toBe(300 - failed);
  });

  it('unknown_error_rate answers -100 with HTTP 200', async () => {
    sim.control.setFaults({ unknown_error_rate: 1 });
    const r = await post(sim.url, '/message/template', token, otpSend());
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ error: -100, message: 'Unknown error', data: null });
    expect(sim.control.stats().faults.unknown_errors).toBe(1);
  });

  it('an outage window fails everything inside it and nothing after it', async () => {
    const until = Date.now() + 1000;
    await control(sim.url, 'PUT', '/faults', { outage_until: until, outage_mode: 'unknown_error' });
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(-100);
    sim.control.setFaults({ outage_mode: '5xx', error_status: 502 });
    expect((await post(sim.url, '/message/template', token, otpSend())).status).toBe(502);
    await sleep(until - Date.now() + 20);
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(0);
    expect(sim.control.stats().faults.outage).toBe(2);
  });

  it('a window in the future does not apply yet', async () => {
    sim.control.setFaults({ outage_from: Date.now() + 60_000, outage_until: Date.now() + 120_000 });
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(0);
  });

  it('timeout_rate never answers and drops the connection after timeout_ms', async () => {
    sim.control.setFaults({ timeout_rate: 1, timeout_ms: 200 });
    const events: string[] = [];
    const marker = setTimeout(() => events.push('well before timeout_ms'), 50);
    await expect(post(sim.url, '/message/template', token, otpSend('84987654321', { tracking_id: 'f-timeout' })).finally(() => events.push('dropped'))).rejects.toThrow();
    clearTimeout(marker);
    // Held open, not refused at once: the connection drops only after a marker far earlier than timeout_ms.
    expect(events).toEqual(['well before timeout_ms', 'dropped']);
    expect(sim.control.received({ tracking_id: 'f-timeout' })[0]).toMatchObject({ fault: 'timeout', http_status: null, response: null });
    expect(sim.control.stats().sends.accepted).toBe(0);
  });

  it('a client that gives up first does not leave anything hanging', async () => {
    sim.control.setFaults({ timeout_rate: 1, timeout_ms: 60_000 });
    await expect(fetch(`${sim.url}/message/quota`, { headers: { access_token: token }, signal: AbortSignal.timeout(100) })).rejects.toThrow();
  });

  it('after_processing: the send is carried out, then the answer is lost (the duplicate-making case)', async () => {
    sim.control.setFaults({ timeout_rate: 1, timeout_ms: 100, after_processing: true });
    const body = otpSend('84987654321', { tracking_id: 'dup-1' });
    await expect(post(sim.url, '/message/template', token, body)).rejects.toThrow();
    sim.control.clearFaults();
    // a careless client retries with the same tracking_id
    expect((await post(sim.url, '/message/template', token, body)).json.error).toBe(0);
    const log = sim.control.received({ tracking_id: 'dup-1' });
    expect(log.map((e) => e.fault)).toEqual(['timeout', null]);
    expect((log[0]?.response as { error: number }).error).toBe(0);
    const stats = sim.control.stats();
    expect(stats.sends.accepted).toBe(2);
    expect(stats.sends.duplicate_tracking_ids).toBe(1);
    expect(stats.sends.duplicate_accepts).toBe(1);
  });

  it('latency delays answers', async () => {
    sim.control.setFaults({ latency_ms: 300 });
    const events: string[] = [];
    const marker = setTimeout(() => events.push('well before latency_ms'), 50);
    const answer = await post(sim.url, '/message/template', token, otpSend()).finally(() => events.push('answered'));
    clearTimeout(marker);
    expect(answer.json.error).toBe(0);
    expect(events).toEqual(['well before latency_ms', 'answered']);
  });

  it('scope send leaves reads alone; scope all includes the OAuth endpoint', async () => {
    sim.control.setFaults({ error_rate_5xx: 1, scope: 'send' });
    expect((await get(sim.url, '/message/quota', token)).status).toBe(200);
    expect((await post(sim.url, '/message/template', token, otpSend())).status).toBe(503);
    sim.control.setFaults({ scope: 'all' });
    const rt = sim.control.oa('4318269720189301001').refresh_token as string;
    expect((await refresh(sim.url, rt)).status).toBe(503);
    // the refresh token was not consumed
    sim.control.clearFaults();
    expect((await refresh(sim.url, rt)).json.access_token).toEqual(expect.any(String));
    // control routes are never faulted
    sim.control.setFaults({ error_rate_5xx: 1, scope: 'all' });
    expect((await control(sim.url, 'GET', '/stats')).status).toBe(200);
  });

  it('rejects bad fault settings', async () => {
    expect((await control(sim.url, 'PUT', '/faults', { error_rate_5xx: 2 })).status).toBe(400);
    expect((await control(sim.url, 'PUT', '/faults', { bogus: 1 })).status).toBe(400);
    expect((await control(sim.url, 'PUT', '/faults', { error_rate_5xx: 0.6, timeout_rate: 0.6 })).status).toBe(400);
    expect(() => sim.control.setFaults({ scope: 'nope' as never })).toThrow(/scope/);
    expect((await control(sim.url, 'GET', '/faults')).json.error_rate_5xx).toBe(0);
    const del = await control(sim.url, 'DELETE', '/faults');
    expect(del.json).toMatchObject({ error_rate_5xx: 0, timeout_rate: 0, outage_until: null });
  });
});
