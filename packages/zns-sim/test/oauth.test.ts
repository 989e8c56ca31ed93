import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { APP_ID, APP_SECRET, OA_ID, REFRESH_TOKEN, accessToken, control, get, otpSend, post, refresh, start, tokenRequest } from './helpers.ts';

describe('OAuth v4 token endpoint', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await start();
  });
  afterAll(() => sim.close());

  it('refresh returns a new pair with expires_in as a string, and the refresh token is single-use', async () => {
    const first = await refresh(sim.url, REFRESH_TOKEN);
    expect(first.status).toBe(200);
    expect(Object.keys(first.json).sort()).toEqual(['access_token', 'expires_in', 'refresh_token']);
    expect(first.json.expires_in).toBe('90000');
    expect(typeof first.json.access_token).toBe('string');
    expect(first.json.refresh_token).not.toBe(REFRESH_TOKEN);

    const again = await refresh(sim.url, REFRESH_TOKEN);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ error: -14014, error_name: expect.any(String), error_description: expect.any(String) });
    expect(again.json.access_token).toBeUndefined();

    // The new refresh token works exactly once too.
    const second = await refresh(sim.url, first.json.refresh_token);
    expect(second.json.access_token).toEqual(expect.any(String));
    expect((await refresh(sim.url, first.json.refresh_token)).json.error).toBe(-14014);
    expect(sim.control.oa(OA_ID).refresh_token).toBe(second.json.refresh_token);

    // The earlier access token stays valid until it expires.
    const quota = await get(sim.url, '/message/quota', first.json.access_token);
    expect(quota.json.error).toBe(0);
  });

  it('checks app_id, the secret_key header, grant_type and the form body', async () => {
    const { refresh_token } = sim.control.oa(OA_ID);
    const rt = refresh_token as string;
    expect((await tokenRequest(sim.url, { app_id: '999', grant_type: 'refresh_token', refresh_token: rt })).json.error).toBe(-14002);
    expect((await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'refresh_token', refresh_token: rt }, 'wrong')).json.error).toBe(-14004);
    expect((await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'refresh_token', refresh_token: rt }, null)).json.error).toBe(-14004);
    expect((await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'password', refresh_token: rt })).json.error).toBe(-14001);
    // JSON instead of a form body is not accepted.
    const json = await fetch(`${sim.url}/v4/oa/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', secret_key: APP_SECRET },
      body: JSON.stringify({ app_id: APP_ID, grant_type: 'refresh_token', refresh_token: rt }),
    });
    expect(json.status).toBe(200);
    expect(((await json.json()) as { error: number }).error).toBe(-14001);
    // None of the failures consumed the refresh token.
    expect((await refresh(sim.url, rt)).json.access_token).toEqual(expect.any(String));
  });

  it('answers -124 for a missing, unknown or expired access token', async () => {
    const token = await accessToken(sim.url, sim.control.oa(OA_ID).refresh_token as string);
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(0);
    for (const t of [null, 'nope']) {
      const r = await post(sim.url, '/message/template', t, otpSend());
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ error: -124, message: 'Access token invalid', data: null });
    }
    const expired = await control(sim.url, 'POST', `/tokens/${OA_ID}/expire`);
    expect(expired.json.expired).toBeGreaterThanOrEqual(1);
    expect((await post(sim.url, '/message/template', token, otpSend())).json.error).toBe(-124);
    expect((await get(sim.url, '/message/quota', token)).json.error).toBe(-124);
    expect((await get(sim.url, '/template/all?offset=0&limit=10', token)).json.error).toBe(-124);
    // A refresh brings a working token back.
    const fresh = await accessToken(sim.url, sim.control.oa(OA_ID).refresh_token as string);
    expect((await post(sim.url, '/message/template', fresh, otpSend())).json.error).toBe(0);
  });

  it('checks appsecret_proof when the header is present', async () => {
    const token = await accessToken(sim.url, sim.control.oa(OA_ID).refresh_token as string);
    const proof = createHmac('sha256', APP_SECRET).update(token).digest('hex');
    expect((await post(sim.url, '/message/template', token, otpSend(), { appsecret_proof: proof })).json.error).toBe(0);
    expect((await post(sim.url, '/message/template', token, otpSend(), { appsecret_proof: 'bad' })).json.error).toBe(-1241);
  });

  it('revoking the refresh token makes refresh fail; a control-set one works', async () => {
    const rt = sim.control.oa(OA_ID).refresh_token as string;
    expect((await control(sim.url, 'POST', `/tokens/${OA_ID}/revoke-refresh`)).status).toBe(204);
    expect((await refresh(sim.url, rt)).json.error).toBe(-14014);
    expect((await control(sim.url, 'PUT', `/oas/${OA_ID}/refresh-token`, { refresh_token: 'test-rt-1' })).status).toBe(204);
    expect((await refresh(sim.url, 'test-rt-1')).json.access_token).toEqual(expect.any(String));
  });

  it('exchanges a single-use authorization code with PKCE', async () => {
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const { json } = await control(sim.url, 'POST', `/oas/${OA_ID}/authorization-code`, { code_challenge: challenge });
    const code = json.code as string;
    expect((await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'authorization_code', code, code_verifier: 'wrong' })).json.error).toBe(-14019);
    // A failed verifier burns the code, like any use.
    expect((await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'authorization_code', code, code_verifier: verifier })).json.error).toBe(-14015);
    const code2 = (await control(sim.url, 'POST', `/oas/${OA_ID}/authorization-code`, { code_challenge: challenge })).json.code as string;
    const ok = await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'authorization_code', code: code2, code_verifier: verifier });
    expect(ok.json).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String), expires_in: '90000' });
    expect((await tokenRequest(sim.url, { app_id: APP_ID, grant_type: 'authorization_code', code: code2, code_verifier: verifier })).json.error).toBe(-14015);
  });
});

describe('token lifetimes', () => {
  it('uses the configured access-token lifetime and expires tokens by the clock', async () => {
    let now = Date.UTC(2026, 0, 10, 3, 0, 0);
    const sim = await start({ settings: { access_token_lifetime_s: 60 }, now: () => now });
    try {
      const r = await refresh(sim.url);
      expect(r.json.expires_in).toBe('60');
      const token = r.json.access_token as string;
      now += 59_000;
      expect((await get(sim.url, '/message/quota', token)).json.error).toBe(0);
      now += 2_000;
      expect((await get(sim.url, '/message/quota', token)).json.error).toBe(-124);
    } finally {
      await sim.close();
    }
  });

  it('expires refresh tokens after refresh_token_lifetime_s', async () => {
    let now = Date.UTC(2026, 0, 10, 3, 0, 0);
    const sim = await start({ settings: { refresh_token_lifetime_s: 100 }, now: () => now });
    try {
      now += 101_000;
      expect((await refresh(sim.url)).json.error).toBe(-14014);
    } finally {
      await sim.close();
    }
  });
});
