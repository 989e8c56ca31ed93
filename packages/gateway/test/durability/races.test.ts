/**
 * "Concurrency: 20 batches racing for a wallet that holds 10 batches' worth end with exactly 10
 * accepted and the balance at 0, never below; the same for the account cap." Also the daily quota,
 * single sends, one Idempotency-Key sent many times at once, and two gateways (two runtimes with
 * their own group committers and pools) on one PostgreSQL database.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { startService, type RunningService } from '../../src/main/server.ts';
import { STORE_KINDS, VALID_DATA, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { auditBooks, readBooks } from './support.ts';
import { expectError } from '../api/helpers.ts';

const PRICE = 300;
const BATCH_SIZE = 50;
const BATCH_COST = PRICE * BATCH_SIZE;

function batchBody(workspace: SeededWorkspace, size: number, tag: string) {
  return {
    template_id: workspace.templateId,
    recipients: Array.from({ length: size }, (_, index) => ({
      phone: `0912${String(index).padStart(6, '0')}`,
      template_data: VALID_DATA,
      tracking_id: `${tag}-${index}`,
    })),
  };
}

function sendBody(workspace: SeededWorkspace, index: number) {
  return { template_id: workspace.templateId, phone: `0987${String(index).padStart(6, '0')}`, template_data: VALID_DATA };
}

/** Fires every request at once (round-robin over the gateways) and waits for all the answers. */
async function fireAll(urls: string[], workspace: SeededWorkspace, requests: { path: string; body: unknown; headers?: Record<string, string> }[]) {
  return Promise.all(
    requests.map((request, index) => httpRequest(urls[index % urls.length]!, 'POST', request.path, { key: workspace.apiKey, body: request.body, headers: request.headers })),
  );
}

function statusCounts(responses: TestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

/** msg_ids acknowledged by 202 answers of send and batch. */
function acknowledgedIds(responses: TestResponse[]): string[] {
  return responses
    .filter((response) => response.status === 202)
    .flatMap((response) =>
      response.body.msg_id !== undefined
        ? [response.body.msg_id as string]
        : (response.body.results as { status: string; msg_id?: string }[]).filter((result) => result.status === 'queued').map((result) => result.msg_id!),
    );
}

async function expectExactBooks(gateway: TestGateway, workspace: SeededWorkspace, acknowledged: string[], expected: { topUp: number; rows: number }) {
  const books = await readBooks(gateway.runtime.store.db, workspace.workspaceId);
  expect(acknowledged.length).toBe(expected.rows);
  expect(new Set(acknowledged).size).toBe(expected.rows);
  expect(new Set(books.messageIds)).toEqual(new Set(acknowledged));
  expect(books.messageIds.length).toBe(expected.rows);
  expect(books.workspace.balance).toBe(expected.topUp - PRICE * expected.rows);
  expect(books.workspace.messages_accepted).toBe(expected.rows);
  expect(auditBooks(books, { topUp: expected.topUp, price: PRICE })).toEqual([]);
  expect(books.ledger.every((entry) => entry.balance_after >= 0)).toBe(true);
  return books;
}

/** The race scenarios, run against one gateway or spread over several that share a database. */
function raceScenarios(setup: () => { gateway: TestGateway; urls: string[] }) {
  it('20 batches for a wallet that holds 10: exactly 10 accepted, the other 10 are 402 with nothing queued, balance 0', async () => {
    const { gateway, urls } = setup();
    const topUp = 10 * BATCH_COST;
    const workspace = await seedWorkspace(gateway, { balance: topUp, price: PRICE });
    const responses = await fireAll(
      urls,
      workspace,
      Array.from({ length: 20 }, (_, index) => ({ path: '/api/v1/messages/batch', body: batchBody(workspace, BATCH_SIZE, `b${index}`) })),
    );
    expect(statusCounts(responses)).toEqual({ 202: 10, 402: 10 });
    for (const response of responses.filter((item) => item.status === 202)) {
      expect(response.body.accepted).toBe(BATCH_SIZE);
      expect(response.body.results.every((result: { status: string }) => result.status === 'queued')).toBe(true);
    }
    for (const response of responses.filter((item) => item.status === 402)) expectError(response, 'insufficient_balance');
    const books = await expectExactBooks(gateway, workspace, acknowledgedIds(responses), { topUp, rows: 10 * BATCH_SIZE });
    expect(books.workspace.balance).toBe(0);
    const wallet = await gateway.admin('GET', `/workspaces/${workspace.workspaceId}/wallet`);
    expect(wallet.body.balance).toBe(0);
  });

  it('20 batches against an account cap of 10 batches: exactly 10 accepted, messages_used at the cap', async () => {
    const { gateway, urls } = setup();
    const topUp = 10_000_000;
    const cap = 10 * BATCH_SIZE;
    const workspace = await seedWorkspace(gateway, { balance: topUp, price: PRICE, messageCap: cap });
    const responses = await fireAll(
      urls,
      workspace,
      Array.from({ length: 20 }, (_, index) => ({ path: '/api/v1/messages/batch', body: batchBody(workspace, BATCH_SIZE, `c${index}`) })),
    );
    expect(statusCounts(responses)).toEqual({ 202: 10, 402: 10 });
    for (const response of responses.filter((item) => item.status === 402)) expectError(response, 'account_cap_reached');
    await expectExactBooks(gateway, workspace, acknowledgedIds(responses), { topUp, rows: cap });
    const read = await gateway.admin('GET', `/workspaces/${workspace.workspaceId}`);
    expect(read.body).toMatchObject({ messages_used: cap, message_cap: cap, balance: topUp - PRICE * cap });
  });

  it('60 single sends against a balance for exactly 25: exactly 25 accepted', async () => {
    const { gateway, urls } = setup();
    const affordable = 25;
    const topUp = affordable * PRICE;
    const workspace = await seedWorkspace(gateway, { balance: topUp, price: PRICE });
    const responses = await fireAll(
      urls,
      workspace,
      Array.from({ length: 60 }, (_, index) => ({ path: '/api/v1/messages/send', body: sendBody(workspace, index) })),
    );
    expect(statusCounts(responses)).toEqual({ 202: affordable, 402: 60 - affordable });
    const books = await expectExactBooks(gateway, workspace, acknowledgedIds(responses), { topUp, rows: affordable });
    expect(books.workspace.balance).toBe(0);
  });

  it('20 batches of 30 against a daily quota of 500: exactly 500 queued in all, each batch a prefix, at most one cut short', async () => {
    const { gateway, urls } = setup();
    const topUp = 10_000_000;
    const quota = 500;
    const size = 30;
    const workspace = await seedWorkspace(gateway, { balance: topUp, price: PRICE, dailyQuota: quota });
    const responses = await fireAll(
      urls,
      workspace,
      Array.from({ length: 20 }, (_, index) => ({ path: '/api/v1/messages/batch', body: batchBody(workspace, size, `q${index}`) })),
    );
    expect(statusCounts(responses)).toEqual({ 202: 20 });
    const accepted = responses.map((response) => response.body.accepted as number);
    expect(accepted.reduce((sum, count) => sum + count, 0)).toBe(quota);
    expect(accepted.filter((count) => count > 0 && count < size).length).toBeLessThanOrEqual(1);
    for (const response of responses) {
      const results = response.body.results as { status: string; msg_id?: string; error?: string }[];
      results.forEach((result, index) => {
        if (index < response.body.accepted) expect(result).toMatchObject({ status: 'queued', msg_id: expect.any(String) });
        else expect(result.status === 'error' && result.msg_id === undefined && /^daily_quota_exceeded: /.test(result.error ?? '')).toBe(true);
      });
    }
    await expectExactBooks(gateway, workspace, acknowledgedIds(responses), { topUp, rows: quota });
    const reserved = await gateway.runtime.store.db.selectFrom('quota_reservations').select('reserved').where('oa_id', '=', workspace.oaId).execute();
    expect(reserved.reduce((sum, row) => sum + row.reserved, 0)).toBe(quota);
  });

  it('single sends and batches racing for one daily quota: every acceptance reserved once, batches cut only by what is left', async () => {
    const { gateway, urls } = setup();
    const topUp = 10_000_000;
    const quota = 500;
    const size = 30;
    const singles = 20;
    const workspace = await seedWorkspace(gateway, { balance: topUp, price: PRICE, dailyQuota: quota });
    const requests = Array.from({ length: 20 + singles }, (_, index) =>
      index % 2 === 0 ? { path: '/api/v1/messages/batch', body: batchBody(workspace, size, `m${index}`) } : { path: '/api/v1/messages/send', body: sendBody(workspace, index) },
    );
    const responses = await fireAll(urls, workspace, requests);
    // Single sends are not refused by the quota (docs/api.md), but they do use it up.
    expect(statusCounts(responses)).toEqual({ 202: 20 + singles });
    const batchTotal = responses.filter((response) => response.body.accepted !== undefined).reduce((sum, response) => sum + (response.body.accepted as number), 0);
    expect(batchTotal).toBeLessThanOrEqual(quota);
    expect(batchTotal).toBeGreaterThanOrEqual(quota - singles);
    expect(responses.filter((response) => response.body.accepted > 0 && response.body.accepted < size).length).toBeLessThanOrEqual(1);
    await expectExactBooks(gateway, workspace, acknowledgedIds(responses), { topUp, rows: batchTotal + singles });
    const reserved = await gateway.runtime.store.db.selectFrom('quota_reservations').select('reserved').where('oa_id', '=', workspace.oaId).execute();
    expect(reserved.reduce((sum, row) => sum + row.reserved, 0)).toBe(batchTotal + singles);
  });

  it.each([
    ['send', '/api/v1/messages/send', 1],
    ['batch', '/api/v1/messages/batch', 5],
  ])('10 concurrent %s requests with one Idempotency-Key: one acceptance, one charge, the rest replay it or get 409', async (_name, path, size) => {
    const { gateway, urls } = setup();
    const topUp = 1_000_000;
    const workspace = await seedWorkspace(gateway, { balance: topUp, price: PRICE });
    const body = path.endsWith('/send') ? sendBody(workspace, 1) : batchBody(workspace, size, 'idem');
    const headers = { 'idempotency-key': `same-key-${path}` };
    const responses = await fireAll(urls, workspace, Array.from({ length: 10 }, () => ({ path, body, headers })));
    const accepted = responses.filter((response) => response.status === 202);
    expect(responses.filter((response) => response.status !== 202 && response.status !== 409).map((response) => response.text)).toEqual([]);
    expect(accepted.filter((response) => response.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    for (const response of accepted) expect(response.body).toEqual(accepted[0]!.body);
    for (const response of responses.filter((item) => item.status === 409)) expectError(response, 'idempotency_key_in_flight');

    // Once the first is done, the same key and body replay it from every gateway.
    for (const url of urls) {
      const again = await httpRequest(url, 'POST', path, { key: workspace.apiKey, body, headers });
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(accepted[0]!.body);
    }
    const books = await expectExactBooks(gateway, workspace, acknowledgedIds([accepted[0]!]), { topUp, rows: size });
    expect(books.ledger.filter((entry) => entry.kind === 'charge')).toHaveLength(1);
  });
}

describe.each(STORE_KINDS)('races on one gateway (%s)', (kind) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => {
    await gateway?.close();
  });
  raceScenarios(() => ({ gateway, urls: [gateway.url] }));
});

/**
 * Two gateways in one process but with everything of their own (runtime, group committer,
 * connection pool, caches), on the same PostgreSQL database: the database alone keeps them honest.
 */
describe.each(STORE_KINDS.filter((kind) => kind === 'postgres'))('races between two gateways on one database (%s)', (kind) => {
  let gateway: TestGateway;
  let second: { runtime: Runtime; service: RunningService; url: string } | null = null;
  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    const runtime = await createRuntime(gateway.config, { log: pino({ level: 'silent' }) });
    const service = await startService(runtime, { api: true, worker: false });
    second = { runtime, service, url: service.url! };
  });
  afterAll(async () => {
    await second?.service.stop();
    await gateway?.close();
  });

  raceScenarios(() => ({ gateway, urls: [gateway.url, second!.url] }));

  it('two workspaces, each able to pay 10 of 20 batches, interleaved over both gateways: exactly 10 each', async () => {
    const topUp = 10 * BATCH_COST;
    const first = await seedWorkspace(gateway, { balance: topUp, price: PRICE });
    const other = await seedWorkspace(gateway, { balance: topUp, price: PRICE });
    const urls = [gateway.url, second!.url];
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, index) => {
        const workspace = index % 4 < 2 ? first : other;
        return httpRequest(urls[index % 2]!, 'POST', '/api/v1/messages/batch', { key: workspace.apiKey, body: batchBody(workspace, BATCH_SIZE, `w${index}`) }).then(
          (response) => ({ workspace, response }),
        );
      }),
    );
    for (const workspace of [first, other]) {
      const mine = responses.filter((item) => item.workspace === workspace).map((item) => item.response);
      expect(statusCounts(mine)).toEqual({ 202: 10, 402: 10 });
      const books = await expectExactBooks(gateway, workspace, acknowledgedIds(mine), { topUp, rows: 10 * BATCH_SIZE });
      expect(books.workspace.balance).toBe(0);
    }
  });
});
