/**
 * Concurrent batches never accept more than the platform's remaining daily quota: with 30 left at
 * the platform, ten batches of ten fired at once get exactly 30 accepted between them, and the
 * rest `daily_quota_exceeded`. Then every accepted message is sent and delivered: the platform
 * refuses none with -144, and the wallet is charged for exactly those 30. Real simulator over HTTP,
 * the gateway's own worker, SQLite and PostgreSQL; on PostgreSQL also with the batches split
 * between two gateway processes on one database, each with its own quota cache.
 */
import { randomBytes } from 'node:crypto';
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { auditBooks, readBooks, startGatewayProcess, type GatewayProcess } from '../durability/support.ts';
import { gatewayEnvironment, httpRequest, STORE_KINDS, startTestGateway, type TestGateway, type TestResponse } from '../harness.ts';
import { waitFor } from '../wait-for.ts';

const OTP_TEMPLATE = '250002';
const PRICE = DEMO_TEMPLATES.find((template) => template.template_id === OTP_TEMPLATE)!.price;
const TOP_UP = 1_000_000;
const OA_ID = DEMO_SENDER_ACCOUNT.oa_id;
/** What the platform has left today; the configured daily quota (5000) is far larger. */
const PLATFORM_REMAINING = 30;
const BATCHES = 10;
const RECIPIENTS_PER_BATCH = 10;

interface BatchResult {
  msg_id?: string;
  status: string;
  error?: string;
}

/** Either gateway, as far as a customer's requests go. */
type Api = (method: string, path: string, key: string, body?: unknown) => Promise<TestResponse>;

describe.each(STORE_KINDS)("concurrent batches and the platform's remaining quota (%s)", (kind) => {
  let simulator: RunningSimulator | undefined;
  let gateway: TestGateway | undefined;
  let secondGateway: GatewayProcess | undefined;

  afterEach(async () => {
    await secondGateway?.kill();
    await gateway?.close();
    await simulator?.close();
    secondGateway = undefined;
    gateway = undefined;
    simulator = undefined;
  });

  /** Settings shared by every gateway process of a test. */
  const GATEWAY_ENV = {
    TMS_DISPATCH_POLL_MS: '20',
    TMS_TEMPLATE_SYNC_MS: '0',
    // One lookup serves the whole test: every batch is capped with the same platform figure.
    TMS_PLATFORM_QUOTA_CACHE_MS: '600000',
  };

  /** The simulator with 30 sends left for the demo OA, a gateway with a worker, a funded workspace and its key. */
  async function setUp(env: Record<string, string> = {}): Promise<{ target: TestGateway; sim: RunningSimulator; workspaceId: string; apiKey: string }> {
    simulator = await startSimulator({ eventsUrl: null, eventsDelayMs: 20 });
    const sim = simulator;
    // Every number is a Zalo user who receives the message.
    sim.control.setRecipientRules([]);
    sim.control.setQuota(OA_ID, { remaining_quota: PLATFORM_REMAINING });
    gateway = await startTestGateway(kind, { worker: true, env: { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, ...GATEWAY_ENV, ...env } });
    const target = gateway;
    sim.control.setEvents({ url: `${target.url}/platform/zns/events` });
    const workspaceId = (await target.admin('POST', '/workspaces', { name: `concurrent quota ${randomBytes(3).toString('hex')}` })).body.id as string;
    expect((await target.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: TOP_UP })).status).toBe(201);
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await target.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await target.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    const apiKey = (await target.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key as string;
    return { target, sim, workspaceId, apiKey };
  }

  /** GET /quota through `api`: the platform's figure is what it reports (and now holds in its cache). */
  async function expectPlatformFigure(api: Api, apiKey: string): Promise<void> {
    const response = await api('GET', '/api/v1/quota', apiKey);
    expect(response.status, response.text).toBe(200);
    const entry = (response.body.quotas as { oa_id: string }[]).find((quota) => quota.oa_id === OA_ID);
    expect(entry).toMatchObject({ daily_quota: DEMO_SENDER_ACCOUNT.daily_quota, remaining: PLATFORM_REMAINING, error: null });
  }

  /** Fires every batch at once, batch i through apis[i % apis.length]; returns each one's results. */
  async function fireBatches(apis: Api[], apiKey: string): Promise<BatchResult[][]> {
    const answers = await Promise.all(
      Array.from({ length: BATCHES }, (_unused, batch) => {
        const recipients = Array.from({ length: RECIPIENTS_PER_BATCH }, (_ignored, index) => ({
          phone: `0915${String(batch * RECIPIENTS_PER_BATCH + index).padStart(6, '0')}`,
          template_data: { otp: '123456' },
        }));
        return apis[batch % apis.length]!('POST', '/api/v1/messages/batch', apiKey, { template_id: OTP_TEMPLATE, recipients });
      }),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(202);
    for (const answer of answers) expect(answer.body.accepted).toBe((answer.body.results as BatchResult[]).filter((result) => result.status === 'queued').length);
    return answers.map((answer) => answer.body.results as BatchResult[]);
  }

  /** What must hold once the batches are answered: 30 accepted, the rest refused for quota, then all 30 delivered, none refused by the platform. */
  async function expectExactlyTheRemainingQuota(results: BatchResult[][], target: TestGateway, sim: RunningSimulator, workspaceId: string): Promise<void> {
    const all = results.flat();
    const accepted = all.filter((result) => result.status === 'queued').map((result) => result.msg_id!);
    expect(accepted).toHaveLength(PLATFORM_REMAINING);
    expect(new Set(accepted).size).toBe(PLATFORM_REMAINING);
    const refused = all.filter((result) => result.status !== 'queued');
    expect(refused).toHaveLength(BATCHES * RECIPIENTS_PER_BATCH - PLATFORM_REMAINING);
    for (const result of refused) expect(result).toMatchObject({ status: 'error', error: expect.stringMatching(/^daily_quota_exceeded: /) });

    const db = target.runtime.store.db;
    const statuses = async () => (await db.selectFrom('message_states').select(['id', 'status', 'error_code', 'error_message']).where('workspace_id', '=', workspaceId).execute());
    const final = await waitFor(statuses, (rows) => rows.length === PLATFORM_REMAINING && rows.every((row) => row.status === 'delivered' || row.status === 'failed'), 'every accepted message sent');
    expect(final.filter((row) => row.status !== 'delivered')).toEqual([]);
    expect(final.map((row) => row.id).sort()).toEqual([...accepted].sort());

    // The platform took each of them once and refused nothing: no -144, its quota used up exactly.
    const stats = sim.control.stats();
    expect(stats.sends.by_error).toEqual({});
    expect(stats.sends.accepted).toBe(PLATFORM_REMAINING);
    expect(stats.sends.duplicate_accepts).toBe(0);
    expect(sim.control.messages({ oa_id: OA_ID }).map((message) => message.tracking_id).sort()).toEqual([...accepted].sort());
    expect(sim.control.getQuota(OA_ID).remaining_quota).toBe(0);

    // Charged for the 30 it accepted, nothing for the refused recipients, nothing refunded.
    expect((await target.admin('GET', `/workspaces/${workspaceId}/wallet`)).body.balance).toBe(TOP_UP - PLATFORM_REMAINING * PRICE);
    const books = await readBooks(db, workspaceId);
    expect(auditBooks(books, { topUp: TOP_UP, price: PRICE })).toEqual([]);
    expect(books.ledger.filter((entry) => entry.kind === 'refund')).toEqual([]);
  }

  it('accepts exactly the 30 the platform has left across ten batches fired at once, and sends all 30', async () => {
    const { target, sim, workspaceId, apiKey } = await setUp();
    const api: Api = (method, path, key, body) => target.request(method, path, { key, body });
    await expectPlatformFigure(api, apiKey);
    const results = await fireBatches([api], apiKey);
    await expectExactlyTheRemainingQuota(results, target, sim, workspaceId);
  });

  it.runIf(kind === 'postgres')('accepts exactly 30 between two gateway processes on one database, and sends all 30', async () => {
    const masterKey = randomBytes(32).toString('hex');
    const { target, sim, workspaceId, apiKey } = await setUp({ TMS_MASTER_KEY: masterKey });
    // A second `tms api` process on the same database: its own quota cache, the same reservations.
    secondGateway = await startGatewayProcess(
      gatewayEnvironment(target.database, { ZNS_OAUTH_URL: sim.url, ZNS_API_URL: sim.url, ...GATEWAY_ENV, TMS_MASTER_KEY: masterKey, TMS_ADMIN_TOKEN: target.config.adminToken! }),
    );
    const second = secondGateway;
    const apis: Api[] = [(method, path, key, body) => target.request(method, path, { key, body }), (method, path, key, body) => httpRequest(second.url, method, path, { key, body })];
    for (const api of apis) await expectPlatformFigure(api, apiKey);
    const results = await fireBatches(apis, apiKey);
    await expectExactlyTheRemainingQuota(results, target, sim, workspaceId);
  }, 120_000);
});
