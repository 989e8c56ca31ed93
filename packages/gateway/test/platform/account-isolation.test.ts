/**
 * One sender account's faults must not stop another's sending (real gateway with its worker, real
 * simulator over HTTP, SQLite and PostgreSQL):
 * - the operator verbs refuse credentials that cannot travel as HTTP header values;
 * - credentials stored before that check (written here straight into the store) fail their own
 *   account only, even when tried more often than the platform connection pool has connections;
 * - an account whose sends cannot start (its token refresh is held by a frozen process) leaves
 *   the other accounts' messages flowing.
 */
import { startSimulator, type RunningSimulator, type Seed } from '@tms/zns-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { encryptSecret } from '../../src/lib/crypto.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { runTms } from '../operator/processes.ts';
import { waitFor as waitUntil } from '../wait-for.ts';

interface Account {
  oaId: string;
  appId: string;
  appSecret: string;
  refreshToken: string;
  oaSecretKey: string;
  templateId: string;
}

const PRICE = 250;
const TOP_UP = 1_000_000;

function account(index: number): Account {
  const suffix = String(index).padStart(2, '0');
  return {
    oaId: `43182697201893030${suffix}`,
    appId: `20741381203726230${suffix}`,
    appSecret: `app-secret-${suffix}`,
    refreshToken: `refresh-${suffix}-0001`,
    oaSecretKey: `oa-secret-key-${suffix}`,
    templateId: `2800${suffix}`,
  };
}

function seedOf(accounts: Account[]): Seed {
  return {
    oas: accounts.map((oa) => ({
      oa_id: oa.oaId,
      name: `OA ${oa.oaId}`,
      app_id: oa.appId,
      app_secret: oa.appSecret,
      oa_secret_key: oa.oaSecretKey,
      refresh_token: oa.refreshToken,
      daily_quota: 100_000,
      rsa: null,
      templates: [{ template_id: oa.templateId, name: 'One-time password', params: [{ name: 'otp', type: 'STRING', required: true, min_length: 4, max_length: 10 }] }],
    })),
    recipient_rules: [],
  };
}

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

interface Workspace {
  id: string;
  apiKey: string;
  oa: Account;
}

describe.each(STORE_KINDS)('sender accounts are isolated from each other (%s)', (kind) => {
  let simulator: RunningSimulator | undefined;
  let gateway: TestGateway | undefined;

  afterEach(async () => {
    await gateway?.close();
    await simulator?.close();
    gateway = undefined;
    simulator = undefined;
  });

  async function startPlatform(accounts: Account[], env: Record<string, string>): Promise<TestGateway> {
    simulator = await startSimulator({ seed: seedOf(accounts), eventsUrl: null });
    gateway = await startTestGateway(kind, {
      worker: true,
      env: {
        ZNS_OAUTH_URL: simulator.url,
        ZNS_API_URL: simulator.url,
        ZNS_TIMEOUT_MS: '2000',
        TMS_DISPATCH_POLL_MS: '20',
        TMS_DISPATCH_BACKOFF_MS: '20',
        TMS_TEMPLATE_SYNC_MS: '0',
        TMS_PLATFORM_QUOTA_CACHE_MS: '0',
        ...env,
      },
    });
    simulator.control.setEvents({ url: `${gateway.url}/platform/zns/events`, delay_ms: 20 });
    return gateway;
  }

  async function connect(target: TestGateway, oa: Account): Promise<Workspace> {
    const id = (await target.admin('POST', '/workspaces', { name: `isolation ${oa.oaId}` })).body.id as string;
    expect((await target.admin('POST', `/workspaces/${id}/wallet/top-ups`, { amount: TOP_UP })).status).toBe(201);
    const connected = await target.admin('PUT', `/workspaces/${id}/sender-accounts/${oa.oaId}?verify=false`, {
      name: `OA ${oa.oaId}`,
      daily_quota: 100_000,
      app_id: oa.appId,
      app_secret: oa.appSecret,
      refresh_token: oa.refreshToken,
      oa_secret_key: oa.oaSecretKey,
    });
    expect(connected.status, connected.text).toBe(200);
    const template = await target.admin('PUT', `/workspaces/${id}/templates/${oa.templateId}?verify=false`, {
      name: 'One-time password',
      status: 'ENABLE',
      template_type: 2,
      oa_id: oa.oaId,
      preview_url: 'https://example.com/otp',
      price: PRICE,
      params: [{ name: 'otp', type: 'STRING', required: true, max_length: 10, min_length: 4 }],
    });
    expect(template.status, template.text).toBe(200);
    const apiKey = (await target.admin('POST', `/workspaces/${id}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key as string;
    return { id, apiKey, oa };
  }

  async function accept(target: TestGateway, workspace: Workspace, count: number, firstPhone: number): Promise<string[]> {
    const recipients = Array.from({ length: count }, (_unused, index) => ({ phone: `0912${String(firstPhone + index).padStart(6, '0')}`, template_data: { otp: '123456' } }));
    const response = await target.request('POST', '/api/v1/messages/batch', { key: workspace.apiKey, body: { template_id: workspace.oa.templateId, recipients } });
    expect(response.status, response.text).toBe(202);
    return (response.body.results as { msg_id: string }[]).map((result) => result.msg_id);
  }

  async function statuses(target: TestGateway, ids: string[]): Promise<Record<string, number>> {
    const rows = await target.runtime.store.db.selectFrom('message_states').select(['status']).where('id', 'in', ids).execute();
    const counts: Record<string, number> = {};
    for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + 1;
    return counts;
  }

  const balance = async (target: TestGateway, workspace: Workspace) => (await target.admin('GET', `/workspaces/${workspace.id}/wallet`)).body.balance as number;

  it('the operator API and tms admin refuse credentials that cannot be sent as HTTP header values', async () => {
    const target = await startTestGateway(kind);
    gateway = target;
    const id = (await target.admin('POST', '/workspaces', { name: 'credentials' })).body.id as string;
    const good = { name: 'OA', daily_quota: 1000, app_id: '2074', app_secret: 'app-secret', refresh_token: 'refresh-token', oa_secret_key: 'oa-secret-key' };
    const refused: [string, string, RegExp][] = [
      ['app_secret', 'secret\nwith a line break', /app_secret contains the control character U\+000A at position 7/],
      ['app_secret', 'bí mật', /app_secret contains U\+1EAD at position 5, which an HTTP header cannot carry/],
      ['app_secret', 'app-secret ', /app_secret starts or ends with whitespace/],
      ['refresh_token', 'refresh\u001btoken', /refresh_token contains the control character U\+001B/],
      ['oa_secret_key', '\tkey', /oa_secret_key contains the control character U\+0009/],
      ['app_id', '2074\r', /app_id contains the control character U\+000D/],
    ];
    for (const [field, value, reason] of refused) {
      const response = await target.admin('PUT', `/workspaces/${id}/sender-accounts/4318000000000000001?verify=false`, { ...good, [field]: value });
      expect(response.status, `${field}: ${response.text}`).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request', message: expect.stringMatching(reason) });
    }
    expect((await target.admin('GET', `/workspaces/${id}/sender-accounts`)).body.count).toBe(0);
    // Latin-1 letters can travel in a header: accepted.
    expect((await target.admin('PUT', `/workspaces/${id}/sender-accounts/4318000000000000001?verify=false`, { ...good, app_secret: 'clé-secrète' })).status).toBe(200);

    if (kind === 'sqlite') {
      const cli = await runTms(
        ['admin', 'sender-accounts', 'connect', id, '--oa-id', '4318000000000000002', '--name', 'OA 2', '--daily-quota', '10', '--app-id', '2074', '--app-secret', 'tab\tsecret', '--refresh-token', 'r'],
        { ...target.database.env, TMS_ADMIN_TOKEN: target.config.adminToken!, TMS_MASTER_KEY: target.config.masterKey!.toString('hex'), TMS_LOG_LEVEL: 'silent' },
      );
      expect(cli.code, cli.stdout).toBe(1);
      expect(cli.stderr).toMatch(/app_secret contains the control character U\+0009/);
    }
  });

  it('fails only the accounts whose stored credentials cannot be sent, however often they are tried, while another workspace is delivered', async () => {
    const [healthy, badSecret, badToken] = [account(1), account(2), account(3)];
    const target = await startPlatform([healthy!, badSecret!, badToken!], {
      // A pool far smaller than the number of attempts below: a call that leaked its connection would stop everything.
      ZNS_CONNECTIONS: '2',
      TMS_DISPATCH_ACCOUNT_CONCURRENCY: '20',
    });
    const healthyWorkspace = await connect(target, healthy!);
    const badSecretWorkspace = await connect(target, badSecret!);
    const badTokenWorkspace = await connect(target, badToken!);
    // Rows as an older gateway could have stored them, before the operator verbs checked credentials.
    const masterKey = target.config.masterKey!;
    const db = target.runtime.store.db;
    await db.updateTable('sender_accounts').set({ encrypted_app_secret: encryptSecret('app-secret\nwith a line break', masterKey) }).where('oa_id', '=', badSecret!.oaId).execute();
    await db
      .updateTable('sender_accounts')
      .set({ encrypted_access_token: encryptSecret('access\u0000token', masterKey), access_token_expires_at: Date.now() + 86_400_000 })
      .where('oa_id', '=', badToken!.oaId)
      .execute();

    const badSecretIds = await accept(target, badSecretWorkspace, 60, 0);
    const badTokenIds = await accept(target, badTokenWorkspace, 60, 100);
    const healthyIds = await accept(target, healthyWorkspace, 60, 200);

    await waitFor(() => statuses(target, healthyIds), (counts) => counts.delivered === 60, 'the healthy workspace delivered');
    // The stored access token could not be sent: a fresh one was fetched, and the messages went.
    await waitFor(() => statuses(target, badTokenIds), (counts) => counts.delivered === 60, 'the workspace with a bad stored access token delivered');
    // The app secret can never work: the account needs the operator, its messages fail and are refunded.
    const badSecretCounts = await waitFor(() => statuses(target, badSecretIds), (counts) => counts.failed === 60, 'the bad secret account failed');
    expect(badSecretCounts).toEqual({ failed: 60 });
    const failed = await db.selectFrom('message_states').select(['error_code']).distinct().where('id', 'in', badSecretIds).execute();
    expect(failed).toEqual([{ error_code: -9004 }]);
    expect(await balance(target, badSecretWorkspace)).toBe(TOP_UP);
    expect(await balance(target, healthyWorkspace)).toBe(TOP_UP - 60 * PRICE);
    const listed = await target.admin('GET', `/workspaces/${badSecretWorkspace.id}/sender-accounts`);
    expect(listed.body.sender_accounts[0]).toMatchObject({ status: 'relogin_required', token_problem: expect.stringMatching(/secret_key header cannot be sent.*U\+000A/) });
    expect(simulator!.control.received({ oa_id: badSecret!.oaId })).toHaveLength(0);
    expect((await target.request('GET', '/readyz')).status).toBe(200);

    // Connecting it again with a good secret is the way back.
    const reconnected = await target.admin('PUT', `/workspaces/${badSecretWorkspace.id}/sender-accounts/${badSecret!.oaId}?verify=false`, {
      name: 'again',
      daily_quota: 100_000,
      app_id: badSecret!.appId,
      app_secret: badSecret!.appSecret,
      refresh_token: badSecret!.refreshToken,
      oa_secret_key: badSecret!.oaSecretKey,
    });
    expect(reconnected.status, reconnected.text).toBe(200);
    const again = await accept(target, badSecretWorkspace, 5, 300);
    await waitFor(() => statuses(target, again), (counts) => counts.delivered === 5, 'the reconnected account delivered');
  }, 120_000);

  it('keeps other accounts sending while one account cannot start its sends', async () => {
    const [stuck, flowing] = [account(4), account(5)];
    const target = await startPlatform([stuck!, flowing!], {
      // Small claims and lanes, so that the stuck account's messages alone could fill every claim.
      TMS_DISPATCH_BATCH_SIZE: '50',
      TMS_DISPATCH_PARALLEL_ROUNDS: '2',
      TMS_DISPATCH_ACCOUNT_CONCURRENCY: '10',
    });
    const stuckWorkspace = await connect(target, stuck!);
    const flowingWorkspace = await connect(target, flowing!);
    const db = target.runtime.store.db;
    // Another process took the account's token refresh and froze: its sends wait for that refresh.
    await db.updateTable('sender_accounts').set({ token_refresh_lease_until: Date.now() + 600_000 }).where('oa_id', '=', stuck!.oaId).execute();

    const stuckIds = await accept(target, stuckWorkspace, 150, 0);
    await waitFor(() => statuses(target, stuckIds), (counts) => (counts.sending ?? 0) > 0, 'the stuck account claimed');
    const flowingIds = await accept(target, flowingWorkspace, 40, 500);
    await waitFor(() => statuses(target, flowingIds), (counts) => counts.delivered === 40, 'the other account delivered');

    // All that while, the stuck account's messages were waiting, never given up on or retried.
    const waiting = await db.selectFrom('message_states').select(['status', 'attempts']).where('id', 'in', stuckIds).execute();
    expect(waiting.filter((row) => !(row.status === 'sending' || (row.status === 'queued' && row.attempts === 0)))).toEqual([]);
    expect(simulator!.control.received({ oa_id: stuck!.oaId })).toHaveLength(0);

    // The frozen refresh is over: the stuck account's messages go too, each once.
    await db.updateTable('sender_accounts').set({ token_refresh_lease_until: null }).where('oa_id', '=', stuck!.oaId).execute();
    await waitFor(() => statuses(target, stuckIds), (counts) => counts.delivered === 150, 'the stuck account delivered');
    const accepted = simulator!.control.received({ oa_id: stuck!.oaId }).filter((entry) => (entry.response as { error?: number } | null)?.error === 0);
    expect(new Set(accepted.map((entry) => entry.tracking_id)).size).toBe(150);
    expect(accepted).toHaveLength(150);
  }, 120_000);
});
