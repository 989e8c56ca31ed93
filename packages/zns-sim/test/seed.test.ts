import { describe, expect, it } from 'vitest';
import { DEFAULT_RECIPIENT_RULES, SeedError, parseSeed } from '../src/index.ts';
import { demoSeed } from './helpers.ts';

describe('seed file', () => {
  it('the demo seed matches the gateway demo workspace', () => {
    const seed = parseSeed(demoSeed());
    expect(seed.oas).toHaveLength(1);
    const oa = seed.oas[0]!;
    expect(oa).toMatchObject({
      oa_id: '4318269720189301001',
      name: 'TMS Demo Shop',
      app_id: '2074138120372622001',
      app_secret: 'demo-app-secret-change-me',
      refresh_token: 'demo-refresh-token-0001',
      oa_secret_key: 'demo-oa-secret-key-change-me',
      daily_quota: 5000,
      rsa: 'generate',
    });
    const tpl = Object.fromEntries((oa.templates ?? []).map((t) => [t.template_id, t]));
    expect(Object.keys(tpl).sort()).toEqual(['250001', '250002', '250003']);
    expect(tpl['250001']).toMatchObject({ name: 'Order confirmation', status: 'ENABLE', template_type: 1, price: '300' });
    expect(tpl['250001']?.params?.map((p) => [p.name, p.min_length, p.max_length, p.required])).toEqual([
      ['customer_name', 1, 30, true],
      ['order_code', 1, 30, true],
      ['amount', 1, 20, true],
    ]);
    expect(tpl['250002']).toMatchObject({ name: 'One-time password', status: 'ENABLE', template_type: 2, price: '250' });
    expect(tpl['250002']?.params?.map((p) => [p.name, p.min_length, p.max_length, p.required])).toEqual([['otp', 4, 10, true]]);
    expect(tpl['250003']).toMatchObject({ name: 'Appointment reminder', status: 'ENABLE', template_type: 1, price: '300' });
    expect(tpl['250003']?.params?.map((p) => [p.name, p.min_length, p.max_length, p.required])).toEqual([
      ['customer_name', 1, 30, true],
      ['appointment_time', 1, 20, true],
      ['location', 0, 200, false],
    ]);
    expect(seed.recipient_rules).toEqual(DEFAULT_RECIPIENT_RULES);
  });

  it('fills defaults for a minimal seed', () => {
    const s = parseSeed({ oas: [{ oa_id: '1', name: 'x', app_id: '2', app_secret: 's', oa_secret_key: 'k', refresh_token: 'r' }] });
    expect(s.settings).toMatchObject({ access_token_lifetime_s: 90000, phone_format: 'strict', rsa_public_key_encoding: 'pem' });
    expect(s.settings.events).toMatchObject({ url: null, delay_ms: 1000, retry_delays_ms: [1000, 5000, 15000, 30000, 60000] });
    expect(s.oas[0]).toMatchObject({ daily_quota: 5000, rsa: 'generate', templates: [], promotion_quota: null });
    expect(s.recipient_rules).toHaveLength(2);
  });

  it('names the field that is wrong', () => {
    const base = () => ({ oas: [{ oa_id: '1', name: 'x', app_id: '2', app_secret: 's', oa_secret_key: 'k', refresh_token: 'r', templates: [] as unknown[] }] });
    expect(() => parseSeed({})).toThrow(SeedError);
    expect(() => parseSeed({ oas: [{ oa_id: '1' }] })).toThrow(/oas\[0\]\.name/);
    const badTpl = base();
    badTpl.oas[0]!.templates = [{ template_id: 'abc', name: 't' }];
    expect(() => parseSeed(badTpl)).toThrow(/template_id/);
    const badParam = base();
    badParam.oas[0]!.templates = [{ template_id: '1', name: 't', params: [{ name: 'p', min_length: 5, max_length: 2 }] }];
    expect(() => parseSeed(badParam)).toThrow(/min_length/);
    expect(() => parseSeed({ ...base(), recipient_rules: [{ suffix: '1', result: 'explode' }] })).toThrow(/result/);
    expect(() => parseSeed({ ...base(), recipient_rules: [{ result: 'deliver' }] })).toThrow(/suffix/);
    expect(() => parseSeed({ ...base(), settings: { events: { url: 'nope' } } })).toThrow(/events\.url/);
    expect(() => parseSeed({ ...base(), extra: 1 })).toThrow(/extra/);
    const dupTemplates = { oas: [...base().oas, { ...base().oas[0]!, oa_id: '9', refresh_token: 'r2', templates: [] }] };
    dupTemplates.oas[0]!.templates = [{ template_id: '1', name: 't' }];
    dupTemplates.oas[1]!.templates = [{ template_id: '1', name: 't' }];
    expect(() => parseSeed(dupTemplates)).toThrow(/duplicate template_id/);
  });
});
