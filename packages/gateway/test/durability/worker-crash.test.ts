/**
 * A `tms worker` process killed under load: SIGKILL loses no message and sends none twice
 * that the platform had accepted; SIGTERM stops claiming, records what is in flight and exits 0.
 * The API runs in the test process, the worker as a real child process on the same database, and
 * the ZNS simulator counts every send it receives and POSTs the delivery events back to the API.
 */
import { randomBytes } from 'node:crypto';
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT, DEMO_TEMPLATES } from '../../src/services/demo.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { killAllTms, startTms, type RunningTms } from '../operator/processes.ts';
import { waitFor as waitUntil } from '../wait-for.ts';

const MESSAGES = 2000;
const BATCH_SIZE = 500;
const OTP_TEMPLATE = '250002';
const PRICE = DEMO_TEMPLATES.find((template) => template.template_id === OTP_TEMPLATE)!.price;
/**
 * Delivery events come after the dead worker's claims expire (so only the wait for a trace can
 * prevent a resend) but within the grace period that wait allows.
 */
const LEASE_MS = 3000;
const EVENT_DELAY_MS = 4500;
const GRACE_MS = 9000;

/** This suite's waits are longer than the shared default. */
const waitFor = <T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 120_000): Promise<T> =>
  waitUntil(read, done, what, timeoutMs);

describe.each(STORE_KINDS)('a worker process stopped under load (%s)', (kind) => {
  let simulator: RunningSimulator;
  let gateway: TestGateway;
  const masterKey = randomBytes(32).toString('hex');

  afterEach(async () => {
    await killAllTms();
    await gateway?.close();
    await simulator?.close();
  });

  /** The simulator (answering in 20 ms, events back to the API) and the API with a funded demo workspace. */
  async function setUp(): Promise<{ apiKey: string; workspaceId: string }> {
    simulator = await startSimulator({ eventsUrl: null, eventsDelayMs: EVENT_DELAY_MS });
    simulator.control.setFaults({ latency_ms: 20 });
    // Every number is a Zalo user who receives the message (no -118 or never-delivered suffixes).
    simulator.control.setRecipientRules([]);
    gateway = await startTestGateway(kind, { env: { TMS_MASTER_KEY: masterKey, ZNS_OAUTH_URL: simulator.url, ZNS_API_URL: simulator.url } });
    simulator.control.setEvents({ url: `${gateway.url}/platform/zns/events` });
    const workspaceId = (await gateway.admin('POST', '/workspaces', { name: 'worker crash' })).body.id as string;
    await gateway.admin('POST', `/workspaces/${workspaceId}/wallet/top-ups`, { amount: 10_000_000 });
    const { oa_id: oaId, ...account } = DEMO_SENDER_ACCOUNT;
    expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, account)).status).toBe(200);
    for (const { template_id: templateId, ...template } of DEMO_TEMPLATES) {
      expect((await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, { ...template, oa_id: oaId })).status).toBe(200);
    }
    const apiKey = (await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes: ['messages:send', 'messages:read'] })).body.key as string;
    return { apiKey, workspaceId };
  }

  async function acceptMessages(apiKey: string): Promise<string[]> {
    const ids: string[] = [];
    for (let offset = 0; offset < MESSAGES; offset += BATCH_SIZE) {
      const recipients = Array.from({ length: BATCH_SIZE }, (_unused, index) => ({
        phone: `0912${String(offset + index).padStart(6, '0')}`,
        template_data: { otp: '123456' },
      }));
      const response = await gateway.request('POST', '/api/v1/messages/batch', { key: apiKey, body: { template_id: OTP_TEMPLATE, recipients } });
      expect(response.status, response.text).toBe(202);
      expect(response.body.accepted).toBe(BATCH_SIZE);
      ids.push(...(response.body.results as { msg_id: string }[]).map((result) => result.msg_id));
    }
    return ids;
  }

  function startWorker(): RunningTms {
    return startTms(['worker'], {
      ...gateway.database.env,
      // Its probes' server takes PORT like `tms api`'s: any free one here.
      PORT: '0',
      TMS_MASTER_KEY: masterKey,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_LOG_LEVEL: 'info',
      ZNS_OAUTH_URL: simulator.url,
      ZNS_API_URL: simulator.url,
      TMS_DISPATCH_POLL_MS: '20',
      // Rounds of 100 (4 in flight): a stop lands with some messages claimed and others still queued.
      TMS_DISPATCH_BATCH_SIZE: '100',
      TMS_DISPATCH_LEASE_MS: String(LEASE_MS),
      TMS_DISPATCH_UNCONFIRMED_GRACE_MS: String(GRACE_MS),
      TMS_TEMPLATE_SYNC_MS: '0',
    });
  }

  /** Sends the platform accepted (error 0), per tracking_id, which is our msg_id. */
  function acceptedSendsByMessage(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const entry of simulator.control.received({ path: '/message/template' })) {
      const accepted = (entry.response as { error?: number } | null)?.error === 0;
      if (accepted && entry.tracking_id) counts.set(entry.tracking_id, (counts.get(entry.tracking_id) ?? 0) + 1);
    }
    return counts;
  }

  const countOf = (map: Map<string, string>, status: string) => [...map.values()].filter((value) => value === status).length;
  /** Each message's status; printed as counts per status when a wait runs out. */
  const statuses = async (ids: string[]) => {
    const rows = await gateway.runtime.store.db.selectFrom('message_states').select(['id', 'status']).where('id', 'in', ids).execute();
    const map = new Map(rows.map((row) => [row.id, row.status]));
    return Object.assign(map, { toJSON: () => Object.fromEntries(['queued', 'sending', 'sent', 'delivered', 'failed'].map((status) => [status, countOf(map, status)])) });
  };
  const balance = async (workspaceId: string) => (await gateway.admin('GET', `/workspaces/${workspaceId}/wallet`)).body.balance as number;

  it('SIGKILL mid-dispatch: every message is delivered, none the platform accepted is sent twice, the money matches', async () => {
    const { apiKey, workspaceId } = await setUp();
    const ids = await acceptMessages(apiKey);
    const first = startWorker();
    await first.waitForOutput('tms started');
    await waitFor(() => simulator.control.received({ path: '/message/template' }).length, (count) => count >= MESSAGES / 4, 'the first sends');
    await first.stop('SIGKILL');

    // The kill left claims in flight, some of them already accepted by the platform.
    const afterKill = await statuses(ids);
    const inFlight = ids.filter((id) => afterKill.get(id) === 'sending');
    expect(inFlight.length).toBeGreaterThan(0);
    const acceptedBeforeRestart = acceptedSendsByMessage();
    expect(inFlight.filter((id) => acceptedBeforeRestart.has(id)).length).toBeGreaterThan(0);

    const second = startWorker();
    await second.waitForOutput('tms started');
    const final = await waitFor(() => statuses(ids), (map) => countOf(map, 'delivered') === MESSAGES, 'every message delivered');
    expect(countOf(final, 'delivered')).toBe(MESSAGES);

    const accepted = acceptedSendsByMessage();
    expect(ids.filter((id) => accepted.get(id) !== 1)).toEqual([]);
    expect(await balance(workspaceId)).toBe(10_000_000 - MESSAGES * PRICE);
    await second.stop('SIGTERM');
  }, 240_000);

  it('SIGTERM mid-dispatch: stops claiming, records every send in flight, exits 0; a new worker finishes without duplicates', async () => {
    const { apiKey } = await setUp();
    const ids = await acceptMessages(apiKey);
    const first = startWorker();
    await first.waitForOutput('tms started');
    await waitFor(() => simulator.control.received({ path: '/message/template' }).length, (count) => count >= MESSAGES / 4, 'the first sends');
    const exit = await first.stop('SIGTERM');
    expect(exit.code).toBe(0);

    // Nothing is left claimed: every send in flight was recorded before the process exited.
    const afterStop = await statuses(ids);
    expect(countOf(afterStop, 'sending')).toBe(0);
    expect(countOf(afterStop, 'queued')).toBeGreaterThan(0);
    const sentBeforeRestart = acceptedSendsByMessage().size;

    const second = startWorker();
    await second.waitForOutput('tms started');
    await waitFor(() => statuses(ids), (map) => countOf(map, 'delivered') === MESSAGES, 'every message delivered');
    const accepted = acceptedSendsByMessage();
    expect(accepted.size).toBeGreaterThan(sentBeforeRestart);
    expect(ids.filter((id) => accepted.get(id) !== 1)).toEqual([]);
    await second.stop('SIGTERM');
  }, 240_000);
});
