import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { accessToken, demoSeed, get, start } from './helpers.ts';

describe('templates and quota reads', () => {
  let sim: RunningSimulator;
  let token: string;
  beforeAll(async () => {
    const seed = demoSeed();
    seed.oas.push({
      oa_id: '4318269720189302002',
      name: 'Other OA',
      app_id: '2074138120372622002',
      app_secret: 'other-secret',
      oa_secret_key: 'other-oa-key',
      refresh_token: 'other-rt',
      rsa: null,
      promotion_quota: { daily_quota: 1250, monthly_quota: 10000 },
      templates: [{ template_id: '260001', name: 'Other', status: 'PENDING_REVIEW', params: [] }],
    });
    sim = await start({ seed });
    token = await accessToken(sim.url);
  });
  afterAll(() => sim.close());

  it('template/all lists this OA\'s templates with integer ids and times, and metadata.total', async () => {
    const r = await get(sim.url, '/template/all?offset=0&limit=2', token);
    expect(r.json.error).toBe(0);
    expect(r.json.metadata).toEqual({ total: 3 });
    expect(r.json.data).toHaveLength(2);
    for (const t of r.json.data) {
      expect(Object.keys(t).sort()).toEqual(['createdTime', 'status', 'templateId', 'templateName', 'templateQuality']);
      expect(typeof t.templateId).toBe('number');
      expect(typeof t.createdTime).toBe('number');
      expect(t.status).toBe('ENABLE');
    }
    const page2 = await get(sim.url, '/template/all?offset=2&limit=2', token);
    expect(page2.json.data).toHaveLength(1);
    const ids = [...r.json.data, ...page2.json.data].map((t: { templateId: number }) => t.templateId).sort();
    expect(ids).toEqual([250001, 250002, 250003]);
  });

  it('template/all filters by integer status and rejects bad parameters with -132', async () => {
    expect((await get(sim.url, '/template/all?offset=0&limit=10&status=1', token)).json.metadata.total).toBe(3);
    expect((await get(sim.url, '/template/all?offset=0&limit=10&status=2', token)).json.metadata.total).toBe(0);
    expect((await get(sim.url, '/template/all?offset=0&limit=10&status=ENABLE', token)).json).toMatchObject({ error: -132, message: 'Invalid status', data: null });
    expect((await get(sim.url, '/template/all?offset=0&limit=101', token)).json.error).toBe(-132);
    expect((await get(sim.url, '/template/all?limit=10', token)).json.error).toBe(-132);
  });

  it('template/info/v2 returns the reference fields; v1 answers -106; other OAs\' templates -117', async () => {
    const r = await get(sim.url, '/template/info/v2?template_id=250001', token);
    expect(r.json).toEqual({
      error: 0,
      message: 'Success',
      data: {
        templateId: 250001,
        templateName: 'Order confirmation',
        status: 'ENABLE',
        reason: '',
        listParams: [
          { name: 'customer_name', require: true, type: 'STRING', maxLength: 30, minLength: 1, acceptNull: false },
          { name: 'order_code', require: true, type: 'STRING', maxLength: 30, minLength: 1, acceptNull: false },
          { name: 'amount', require: true, type: 'STRING', maxLength: 20, minLength: 1, acceptNull: false },
        ],
        listButtons: [],
        timeout: 7200000,
        previewUrl: 'https://account.zalo.cloud/znspreview/demo-order',
        templateQuality: 'HIGH',
        templateTag: 'TRANSACTION',
        price: '300',
      },
    });
    expect((await get(sim.url, '/template/info/v2?template_id=250002', token)).json.data.price).toBe('250');
    expect((await get(sim.url, '/template/info/v2?template_id=1', token)).json.error).toBe(-109);
    expect((await get(sim.url, '/template/info/v2?template_id=260001', token)).json.error).toBe(-117);
    expect((await get(sim.url, '/template/info?template_id=250001', token)).json).toEqual({ error: -106, message: 'Method unsupported', data: null });
  });

  it('the other OA has its own token, quota and promotion quota', async () => {
    const r = await fetch(`${sim.url}/v4/oa/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', secret_key: 'other-secret' },
      body: 'app_id=2074138120372622002&grant_type=refresh_token&refresh_token=other-rt',
    });
    const other = ((await r.json()) as { access_token: string }).access_token;
    const q = await get(sim.url, '/message/quota', other);
    expect(q.json.data).toEqual({
      dailyQuota: '5000',
      remainingQuota: '5000',
      dailyQuotaPromotion: '1250',
      remainingQuotaPromotion: '1250',
      monthlyPromotionQuota: 10000,
      remainingMonthlyPromotionQuota: 10000,
      estimatedNextMonthPromotionQuota: 10000,
    });
    expect((await get(sim.url, '/template/all?offset=0&limit=10', other)).json.metadata.total).toBe(1);
    // the demo app's refresh token cannot be used with the other app
    const cross = await fetch(`${sim.url}/v4/oa/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', secret_key: 'other-secret' },
      body: `app_id=2074138120372622002&grant_type=refresh_token&refresh_token=${encodeURIComponent(sim.control.oa('4318269720189301001').refresh_token as string)}`,
    });
    expect(((await cross.json()) as { error: number }).error).toBe(-14014);
  });
});
