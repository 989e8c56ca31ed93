/**
 * What an operator's Prometheus reads from /metrics after real traffic: requests per route pattern
 * (never the raw URL) and status class, with their latency; sender accounts by token status per
 * workspace (a refresh token the platform refuses shows up as relogin_required); each active
 * workspace's wallet balance; the process metrics under readable names. Real gateway with its
 * workers, real simulator. SQLite and PostgreSQL.
 */
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { STORE_KINDS, seedWorkspace, startTestGateway, type TestGateway } from '../harness.ts';
import { waitFor } from '../wait-for.ts';

const OTP_TEMPLATE = '250002';

/** The samples of one metric: labels (as written) → value. */
function samples(metricsText: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    const match = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match && match[1] === name) found.set(match[2] ?? '', Number(match[3]));
  }
  return found;
}

describe.each(STORE_KINDS)('metrics after real traffic (%s)', (kind) => {
  let simulator: RunningSimulator;
  let gateway: TestGateway;
  const scrape = async (): Promise<string> => {
    const response = await gateway.request('GET', '/metrics', { key: gateway.config.adminToken! });
    expect(response.status).toBe(200);
    return response.text;
  };

  beforeAll(async () => {
    simulator = await startSimulator({ eventsUrl: null });
    gateway = await startTestGateway(kind, {
      worker: true,
      env: { ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url, TMS_DISPATCH_POLL_MS: '20', TMS_TEMPLATE_SYNC_MS: '0', ZNS_TIMEOUT_MS: '2000' },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await simulator?.close();
  });

  it('counts and times requests by route pattern and status class; unknown paths share one label', async () => {
    const { apiKey } = await seedWorkspace(gateway);
    expect((await gateway.request('GET', '/healthz')).status).toBe(200);
    for (const id of ['msg_one', 'msg_two', 'msg_three']) {
      expect((await gateway.request('GET', `/api/v1/messages/${id}`, { key: apiKey })).status).toBe(404);
    }
    expect((await gateway.request('GET', '/api/v1/messages/msg_one')).status).toBe(401);
    for (const path of ['/wp-login.php', '/.env', '/api/v2/anything']) expect((await gateway.request('GET', path)).status).toBe(404);

    const text = await scrape();
    const requests = samples(text, 'tms_http_requests_total');
    expect(requests.get('{method="GET",route="/healthz",status_class="2xx"}')).toBeGreaterThanOrEqual(1);
    expect(requests.get('{method="GET",route="/api/v1/messages/:id",status_class="4xx"}')).toBeGreaterThanOrEqual(4);
    expect(requests.get('{method="GET",route="unmatched",status_class="4xx"}')).toBeGreaterThanOrEqual(3);
    // The admin requests of seedWorkspace, by their patterns.
    expect([...requests.keys()].some((labels) => labels.includes('route="/admin/v1/workspaces/:id/api-keys"'))).toBe(true);
    // No raw URL became a label.
    expect(text).not.toContain('msg_one');
    expect(text).not.toContain('wp-login');

    const count = samples(text, 'tms_http_request_duration_seconds_count');
    expect(count.get('{method="GET",route="/api/v1/messages/:id",status_class="4xx"}')).toBe(requests.get('{method="GET",route="/api/v1/messages/:id",status_class="4xx"}'));
    const buckets = samples(text, 'tms_http_request_duration_seconds_bucket');
    expect(buckets.get('{le="+Inf",method="GET",route="/healthz",status_class="2xx"}')).toBeGreaterThanOrEqual(1);
  });

  it('shows every workspace wallet and follows a charge; suspended workspaces leave the gauge', async () => {
    const kept = await seedWorkspace(gateway, { balance: 50_000, price: 300 });
    const suspended = await seedWorkspace(gateway, { balance: 70_000 });
    expect((await gateway.admin('POST', `/workspaces/${suspended.workspaceId}/suspend`)).status).toBe(200);
    const accepted = await gateway.request('POST', '/api/v1/messages/send', {
      key: kept.apiKey,
      body: { phone: '0912345678', template_id: kept.templateId, template_data: { name: 'An', code: 'A1' }, send_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(accepted.status, accepted.text).toBe(202);

    const wallets = samples(await scrape(), 'tms_wallet_balance_vnd');
    expect(wallets.get(`{workspace_id="${kept.workspaceId}"}`)).toBe(50_000 - 300);
    expect(wallets.has(`{workspace_id="${suspended.workspaceId}"}`)).toBe(false);
  });

  it('reports a sender account whose refresh token the platform refused as relogin_required, for its workspace', async () => {
    const workspaceId = (await gateway.admin('POST', '/workspaces', { name: 'relogin' })).body.id as string;
    await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 100_000 });
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    const otp = DEMO_TEMPLATES.find((template) => template.template_id === OTP_TEMPLATE)!;
    const { template_id: _templateId, ...template } = otp;
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${OTP_TEMPLATE}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    const apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send'] })).body.key as string;

    const accountsOf = async () => samples(await scrape(), 'tms_sender_accounts');
    const before = await accountsOf();
    expect(before.get(`{workspace_id="${workspaceId}",status="connected"}`)).toBe(1);
    expect(before.get(`{workspace_id="${workspaceId}",status="relogin_required"}`)).toBe(0);

    simulator.control.revokeRefreshToken(oaId);
    const sent = await gateway.request('POST', '/api/v1/messages/send', { key: apiKey, body: { phone: '0912345679', template_id: OTP_TEMPLATE, template_data: { otp: '123456' } } });
    expect(sent.status, sent.text).toBe(202);
    const after = await waitFor(accountsOf, (accounts) => accounts.get(`{workspace_id="${workspaceId}",status="relogin_required"}`) === 1, 'the account to need a re-login');
    expect(after.get(`{workspace_id="${workspaceId}",status="connected"}`)).toBe(0);
  });

  it('names the process metrics once each, without a doubled prefix', async () => {
    const text = await scrape();
    for (const name of ['tms_process_cpu_seconds_total', 'tms_process_start_time_seconds', 'tms_process_resident_memory_bytes', 'tms_nodejs_eventloop_lag_seconds']) {
      expect(text.split('\n').filter((line) => line.startsWith(`${name} `)), name).toHaveLength(1);
    }
    expect(text).not.toContain('tms_process_process_');
    expect(text).not.toContain('tms_process_nodejs_');
  });
});
