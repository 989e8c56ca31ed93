/** The gateway's ZNS client against the simulator, over real HTTP: the wire protocol both sides speak. */
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformUnavailableError, ZnsClient } from '../../src/platform/zns-client.ts';
import { DEMO_SENDER_ACCOUNT } from '../../src/services/demo.ts';

describe('ZnsClient against zns-sim', () => {
  let simulator: RunningSimulator;
  let client: ZnsClient;
  let accessToken: string;

  beforeAll(async () => {
    simulator = await startSimulator({ eventsUrl: null });
    client = new ZnsClient({ oauthBaseUrl: simulator.url, apiBaseUrl: simulator.url, timeoutMs: 2000 });
    const refreshed = await client.refreshAccessToken({
      appId: DEMO_SENDER_ACCOUNT.app_id,
      appSecret: DEMO_SENDER_ACCOUNT.app_secret,
      refreshToken: DEMO_SENDER_ACCOUNT.refresh_token,
    });
    if (!refreshed.ok) throw new Error(`refresh failed: ${refreshed.code} ${refreshed.message}`);
    accessToken = refreshed.data.accessToken;
  });
  afterAll(async () => {
    await client?.close();
    await simulator?.close();
  });

  it('refreshes with a single-use refresh token and reads expires_in sent as a string', async () => {
    const again = await client.refreshAccessToken({
      appId: DEMO_SENDER_ACCOUNT.app_id,
      appSecret: DEMO_SENDER_ACCOUNT.app_secret,
      refreshToken: DEMO_SENDER_ACCOUNT.refresh_token,
    });
    expect(again).toMatchObject({ ok: false, code: expect.any(Number) });
    expect(accessToken.length).toBeGreaterThan(10);
  });

  it('sends a template and reads msg_id, sent_time and the quota strings', async () => {
    const result = await client.sendMessage(accessToken, {
      kind: 'plain',
      recipient: '84912345678',
      templateId: '250002',
      templateData: { otp: '123456' },
      trackingId: 'msg_test_1',
    });
    expect(result).toEqual({
      ok: true,
      data: { msgId: expect.stringMatching(/^[0-9a-f]{20}$/), sentTime: expect.any(Number), quota: { dailyQuota: 5000, remainingQuota: expect.any(Number) } },
    });
  });

  it('returns the platform error for a bad phone and a refused token', async () => {
    const badPhone = await client.sendMessage(accessToken, { kind: 'plain', recipient: '84123', templateId: '250002', templateData: { otp: '123456' }, trackingId: 't2' });
    expect(badPhone).toMatchObject({ ok: false, code: -108 });
    const badToken = await client.sendMessage('not-a-token', { kind: 'plain', recipient: '84912345678', templateId: '250002', templateData: { otp: '123456' }, trackingId: 't3' });
    expect(badToken).toMatchObject({ ok: false, code: -124 });
  });

  it('reads quota, message status, templates and template info', async () => {
    const quota = await client.getQuota(accessToken);
    expect(quota).toMatchObject({ ok: true, data: { dailyQuota: 5000 } });
    const sent = await client.sendMessage(accessToken, { kind: 'plain', recipient: '84912345679', templateId: '250001', templateData: { customer_name: 'An', order_code: 'A1', amount: '100000' }, trackingId: 't4' });
    if (!sent.ok) throw new Error('send failed');
    const status = await client.getMessageStatus(accessToken, sent.data.msgId);
    expect(status.ok && [0, 1]).toContain(status.ok ? status.data.status : -99);
    const list = await client.listTemplates(accessToken, { offset: 0, limit: 100, status: 'ENABLE' });
    expect(list.ok && list.data.templates.map((template) => template.templateId).sort()).toEqual(['250001', '250002', '250003']);
    const info = await client.getTemplateInfo(accessToken, '250003');
    expect(info).toMatchObject({ ok: true, data: { templateId: '250003', status: 'ENABLE', price: 300 } });
    if (info.ok) expect(info.data.params.find((param) => param.name === 'location')).toMatchObject({ required: false, maxLength: 200 });
  });

  it('treats a 5xx answer as the platform being unavailable', async () => {
    await simulator.control.setFaults({ error_rate_5xx: 1 });
    try {
      await expect(client.getQuota(accessToken)).rejects.toBeInstanceOf(PlatformUnavailableError);
    } finally {
      await simulator.control.setFaults({ error_rate_5xx: 0 });
    }
  });
});
