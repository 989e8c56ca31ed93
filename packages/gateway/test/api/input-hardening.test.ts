/**
 * Inputs no column can take are refused at the edge, alike on SQLite and PostgreSQL, with 400 and
 * nothing written: non-finite and out-of-range numbers in bodies and query strings, the NUL
 * character anywhere (bodies, path parameters, query values), bodies nested too deep, impossible
 * send_at values. Money stays exact: a wallet holds at most 10^15 VND. After every refusal the
 * wallet, the messages, the templates and the operator's view of the workspace are exactly as
 * they were, and all of them still read with 200.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_NESTING_DEPTH } from '../../src/http/plugins/json-body.ts';
import { MAX_INT32, MAX_PRICE_VND, MAX_WALLET_BALANCE_VND } from '../../src/lib/limits.ts';
import { STORE_KINDS, VALID_DATA, httpRequest, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';
import { DAY_MS, expectError, expectStatus, listAll, putTemplate, queueOne, unique, vietnamWallClock, walletOf } from './helpers.ts';

interface HostileRequest {
  name: string;
  method: string;
  /** Relative to the gateway; `{ws}`, `{msg}`, `{tpl}` and `{oa}` are the seeded ids. */
  path: string;
  /** As the operator (admin token) rather than the workspace's key. */
  operator?: boolean;
  body?: unknown;
  /** Sent as is: JSON text a serialiser cannot produce (1e400, deep nesting). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** The catalogued type of the refusal; invalid_request unless said. */
  type?: 'invalid_request' | 'invalid_send_at';
  message?: RegExp;
}

function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function nestedObjects(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe.each(STORE_KINDS)('input hardening (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let queuedId: string;
  const templateBody = (overrides: Record<string, unknown>) => ({
    name: 'Order confirmation',
    status: 'ENABLE',
    template_type: 1,
    oa_id: workspace.oaId,
    preview_url: 'https://example.com/preview',
    price: 300,
    params: [
      { name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
      { name: 'code', type: 'STRING', required: true, max_length: 10, min_length: 1 },
    ],
    ...overrides,
  });
  const accountBody = (overrides: Record<string, unknown>) => ({ name: 'OA', daily_quota: 100_000, app_id: 'app', app_secret: 'app-secret', refresh_token: 'refresh-token', ...overrides });
  /** A body's JSON text with one value replaced by raw JSON text (a number no serialiser writes). */
  const withRawValue = (body: Record<string, unknown>, field: string, raw: string) => JSON.stringify({ ...body, [field]: '__RAW__' }).replace('"__RAW__"', raw);

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway, { balance: 1_000_000, price: 300 });
    queuedId = await queueOne(gateway, workspace, { send_at: vietnamWallClock(Date.now() + DAY_MS) });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** Everything a refused request must leave alone, read through the public and operator APIs. */
  async function snapshot() {
    const read = async (response: Promise<TestResponse>) => {
      const answer = await response;
      expect(answer.status, answer.text).toBe(200);
      return answer.body as unknown;
    };
    const wallet = await walletOf(gateway, workspace.workspaceId);
    return {
      wallet: { balance: wallet.balance, ledger: wallet.ledger.map((entry) => entry.id) },
      workspace: await read(gateway.admin('GET', `/workspaces/${workspace.workspaceId}`)),
      workspaces: ((await read(gateway.admin('GET', '/workspaces?limit=500'))) as { workspaces: { id: string }[] }).workspaces.map((row) => row.id),
      messages: (await listAll(gateway, workspace)).map((message) => [message.msg_id, message.status]),
      templates: await read(gateway.request('GET', '/api/v1/templates', { key: workspace.apiKey })),
      operatorTemplates: await read(gateway.admin('GET', `/workspaces/${workspace.workspaceId}/templates`)),
      senderAccounts: await read(gateway.admin('GET', `/workspaces/${workspace.workspaceId}/sender-accounts`)),
      apiKeys: await read(gateway.admin('GET', `/workspaces/${workspace.workspaceId}/api-keys`)),
      queued: await read(gateway.request('GET', `/api/v1/messages/${queuedId}`, { key: workspace.apiKey })),
    };
  }

  async function send(request: HostileRequest): Promise<TestResponse> {
    const path = request.path
      .replaceAll('{ws}', workspace.workspaceId)
      .replaceAll('{msg}', queuedId)
      .replaceAll('{tpl}', workspace.templateId)
      .replaceAll('{oa}', workspace.oaId);
    const key = request.operator ? gateway.config.adminToken! : workspace.apiKey;
    return httpRequest(gateway.url, request.method, path, {
      key,
      body: request.body,
      rawBody: request.rawBody,
      headers: { ...(request.rawBody !== undefined ? { 'content-type': 'application/json' } : {}), ...request.headers },
    });
  }

  async function expectRefusedAndNothingChanged(requests: HostileRequest[]): Promise<void> {
    for (const request of requests) {
      const before = await snapshot();
      const response = await send(request);
      try {
        expectError(response, request.type ?? 'invalid_request', request.message);
      } catch (error) {
        throw new Error(`${request.name}: ${(error as Error).message}`);
      }
      expect(await snapshot(), `${request.name} changed something`).toEqual(before);
    }
  }

  const sendBody = (extra: Record<string, unknown> = {}) => ({ template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, ...extra });

  describe('numbers out of range', () => {
    it('refuses a non-finite number (1e400) in any JSON body, before anything is written', async () => {
      await expectRefusedAndNothingChanged([
        { name: 'price 1e400', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, rawBody: withRawValue(templateBody({}), 'price', '1e400'), message: /out of range/ },
        { name: 'price -1e400', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, rawBody: withRawValue(templateBody({}), 'price', '-1e400') },
        { name: 'template_type 1e400', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, rawBody: withRawValue(templateBody({}), 'template_type', '1e400') },
        {
          name: 'max_length 1e400',
          method: 'PUT',
          path: '/admin/v1/workspaces/{ws}/templates/{tpl}',
          operator: true,
          rawBody: JSON.stringify(templateBody({})).replace('"max_length":30', '"max_length":1e400'),
        },
        { name: 'daily_quota 1e400', method: 'PUT', path: '/admin/v1/workspaces/{ws}/sender-accounts/{oa}', operator: true, rawBody: withRawValue(accountBody({}), 'daily_quota', '1e400') },
        { name: 'message_cap 1e400', method: 'PUT', path: '/admin/v1/workspaces/{ws}/message-cap', operator: true, rawBody: '{"message_cap":1e400}' },
        { name: 'new workspace message_cap 1e400', method: 'POST', path: '/admin/v1/workspaces', operator: true, rawBody: '{"name":"poisoned","message_cap":1e400}' },
        { name: 'top-up 1e400', method: 'POST', path: '/admin/v1/workspaces/{ws}/wallet/top-ups', operator: true, rawBody: '{"amount":1e400}' },
        { name: 'rate limit 1e400', method: 'POST', path: '/admin/v1/workspaces/{ws}/api-keys', operator: true, rawBody: '{"scopes":["messages:send"],"rate_limit_per_second":1e400}' },
        { name: 'send with 1e400', method: 'POST', path: '/api/v1/messages/send', rawBody: JSON.stringify(sendBody()).replace('"template_data":', '"extra":1e400,"template_data":') },
      ]);
    });

    it("refuses integers beyond their column's range (PostgreSQL integer, exact JavaScript numbers, documented maxima)", async () => {
      await expectRefusedAndNothingChanged([
        { name: 'template_type 2^31', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, body: templateBody({ template_type: MAX_INT32 + 1 }) },
        { name: 'price above 10^9', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, body: templateBody({ price: MAX_PRICE_VND + 1 }) },
        { name: 'price 1e30', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, rawBody: withRawValue(templateBody({}), 'price', '1e30') },
        {
          name: 'max_length 2^31',
          method: 'PUT',
          path: '/admin/v1/workspaces/{ws}/templates/{tpl}',
          operator: true,
          body: templateBody({ params: [{ name: 'name', type: 'STRING', required: true, max_length: MAX_INT32 + 1, min_length: 1 }] }),
        },
        { name: 'daily_quota 2^63', method: 'PUT', path: '/admin/v1/workspaces/{ws}/sender-accounts/{oa}', operator: true, rawBody: withRawValue(accountBody({}), 'daily_quota', '9223372036854775808') },
        { name: 'daily_quota 2^53 + 1', method: 'PUT', path: '/admin/v1/workspaces/{ws}/sender-accounts/{oa}', operator: true, rawBody: withRawValue(accountBody({}), 'daily_quota', '9007199254740993') },
        { name: 'message_cap 1e30', method: 'PUT', path: '/admin/v1/workspaces/{ws}/message-cap', operator: true, rawBody: '{"message_cap":1e30}' },
        { name: 'new workspace message_cap 2^64', method: 'POST', path: '/admin/v1/workspaces', operator: true, rawBody: '{"name":"huge cap","message_cap":18446744073709551616}' },
        { name: 'top-up 2^53', method: 'POST', path: '/admin/v1/workspaces/{ws}/wallet/top-ups', operator: true, body: { amount: 2 ** 53 } },
      ]);
    });

    it('refuses offsets and limits out of range in query strings on every list route', async () => {
      const lists = [
        { path: '/api/v1/messages', operator: false },
        { path: '/admin/v1/workspaces', operator: true },
        { path: '/admin/v1/workspaces/{ws}/wallet', operator: true },
        { path: '/admin/v1/webhook-deliveries', operator: true },
      ];
      const values = ['offset=9223372036854775808', 'offset=18446744073709551616', 'offset=Infinity', 'offset=1e30', `offset=${MAX_INT32 + 1}`, 'offset=-1', 'limit=Infinity', 'limit=1e30'];
      await expectRefusedAndNothingChanged(
        lists.flatMap((list) => values.map((value) => ({ name: `${list.path}?${value}`, method: 'GET', path: `${list.path}?${value}`, operator: list.operator }))),
      );
    });

    it('takes the largest offset: an empty page', async () => {
      const messages = await gateway.request('GET', `/api/v1/messages?offset=${MAX_INT32}`, { key: workspace.apiKey });
      expectStatus(messages, 200);
      expect(messages.body).toMatchObject({ messages: [], offset: MAX_INT32, count: 0, has_more: false });
      const workspaces = await gateway.admin('GET', `/workspaces?offset=${MAX_INT32}`);
      expectStatus(workspaces, 200);
      expect(workspaces.body).toMatchObject({ workspaces: [], count: 0 });
    });

    it('takes every maximum, and everything stays readable', async () => {
      const other = await seedWorkspace(gateway, { balance: 0 });
      expectStatus(await gateway.admin('PUT', `/workspaces/${other.workspaceId}/message-cap`, { message_cap: Number.MAX_SAFE_INTEGER }), 200);
      const account = await gateway.admin('PUT', `/workspaces/${other.workspaceId}/sender-accounts/${other.oaId}?verify=false`, accountBody({ daily_quota: Number.MAX_SAFE_INTEGER }));
      expectStatus(account, 200);
      expect(account.body.daily_quota).toBe(Number.MAX_SAFE_INTEGER);
      const template = await gateway.admin('PUT', `/workspaces/${other.workspaceId}/templates/${other.templateId}?verify=false`, {
        ...templateBody({ oa_id: other.oaId, price: MAX_PRICE_VND, template_type: MAX_INT32 }),
        params: [{ name: 'name', type: 'STRING', required: true, max_length: MAX_INT32, min_length: 0 }],
      });
      expectStatus(template, 200);
      expect(template.body).toMatchObject({ price: MAX_PRICE_VND, template_type: MAX_INT32 });
      const templates = await gateway.request('GET', '/api/v1/templates', { key: other.apiKey });
      expectStatus(templates, 200);
      expect(templates.body.templates[0]).toMatchObject({ template_id: other.templateId, price: MAX_PRICE_VND, template_type: MAX_INT32 });
      const read = await gateway.admin('GET', `/workspaces/${other.workspaceId}`);
      expectStatus(read, 200);
      expect(read.body.message_cap).toBe(Number.MAX_SAFE_INTEGER);
    });
  });

  describe('money is exact', () => {
    it('a wallet holds at most 10^15 VND: a top-up that would cross it is 400 and changes nothing', async () => {
      const rich = await seedWorkspace(gateway, { balance: 0 });
      const topUp = (amount: number) => gateway.admin('POST', `/workspaces/${rich.workspaceId}/wallet/top-ups`, { amount });
      expectError(await topUp(MAX_WALLET_BALANCE_VND + 1), 'invalid_request');
      const full = await topUp(MAX_WALLET_BALANCE_VND);
      expectStatus(full, 201);
      expect(full.body.balance).toBe(MAX_WALLET_BALANCE_VND);
      for (const amount of [1, MAX_WALLET_BALANCE_VND]) {
        const refused = await topUp(amount);
        expectError(refused, 'invalid_request', /at most 1000000000000000 VND/);
      }
      const wallet = await walletOf(gateway, rich.workspaceId);
      expect(wallet.balance).toBe(MAX_WALLET_BALANCE_VND);
      expect(wallet.ledger.map((entry) => [entry.kind, entry.amount, entry.balance_after])).toEqual([['top_up', MAX_WALLET_BALANCE_VND, MAX_WALLET_BALANCE_VND]]);
      // A full wallet still charges and refunds to the dong.
      const price = 300;
      const id = await queueOne(gateway, rich, { send_at: vietnamWallClock(Date.now() + DAY_MS) });
      expect((await walletOf(gateway, rich.workspaceId)).balance).toBe(MAX_WALLET_BALANCE_VND - price);
      expectStatus(await gateway.request('POST', `/api/v1/messages/${id}/cancel`, { key: rich.apiKey }), 200);
      const after = await walletOf(gateway, rich.workspaceId);
      expect(after.balance).toBe(MAX_WALLET_BALANCE_VND);
      expect(after.ledger.reduce((sum, entry) => sum + entry.amount, 0)).toBe(MAX_WALLET_BALANCE_VND);
    });

    it('concurrent top-ups never cross the bound: the check is in the UPDATE itself', async () => {
      const target = await seedWorkspace(gateway, { balance: 0 });
      const amount = MAX_WALLET_BALANCE_VND / 5;
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => gateway.admin('POST', `/workspaces/${target.workspaceId}/wallet/top-ups`, { amount })),
      );
      expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
      for (const refused of answers.filter((answer) => answer.status !== 201)) expectError(refused, 'invalid_request');
      const wallet = await walletOf(gateway, target.workspaceId);
      expect(wallet.balance).toBe(MAX_WALLET_BALANCE_VND);
      expect(wallet.ledger).toHaveLength(5);
      expect(wallet.ledger.reduce((sum, entry) => sum + entry.amount, 0)).toBe(MAX_WALLET_BALANCE_VND);
    });
  });

  describe('the NUL character', () => {
    it('is refused in every body field, key and string that reaches SQL', async () => {
      await expectRefusedAndNothingChanged([
        { name: 'send: template_data value', method: 'POST', path: '/api/v1/messages/send', body: sendBody({ template_data: { name: 'An\u0000', code: 'A1' } }), message: /NUL/ },
        { name: 'send: template_data key', method: 'POST', path: '/api/v1/messages/send', body: sendBody({ template_data: { ...VALID_DATA, 'x\u0000': 'y' } }) },
        { name: 'send: phone', method: 'POST', path: '/api/v1/messages/send', body: sendBody({ phone: '0912\u0000345678' }) },
        { name: 'send: template_id', method: 'POST', path: '/api/v1/messages/send', body: sendBody({ template_id: `${workspace.templateId}\u0000` }) },
        { name: 'send: tracking_id', method: 'POST', path: '/api/v1/messages/send', body: sendBody({ tracking_id: 'order\u00001' }) },
        { name: 'send: send_at', method: 'POST', path: '/api/v1/messages/send', body: sendBody({ send_at: '2026-01-01T00:00:00\u0000' }) },
        { name: 'batch: recipient', method: 'POST', path: '/api/v1/messages/batch', body: { template_id: workspace.templateId, recipients: [{ phone: '0912345678', template_data: VALID_DATA }, { phone: '0912345679', template_data: { name: 'B\u0000', code: 'B1' } }] } },
        { name: 'rsa: template_id', method: 'POST', path: '/api/v1/messages/rsa', body: { template_id: '\u0000', recipients: [{ rsa_phone: 'AAAA', template_data: VALID_DATA }] } },
        { name: 'operator: workspace name', method: 'POST', path: '/admin/v1/workspaces', operator: true, body: { name: 'shop\u0000' } },
        { name: 'operator: template name', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, body: templateBody({ name: 'Order\u0000' }) },
        { name: 'operator: template param name', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/{tpl}', operator: true, body: templateBody({ params: [{ name: 'n\u0000', type: 'STRING', required: true, max_length: 5, min_length: 1 }] }) },
        { name: 'operator: sender account secret', method: 'PUT', path: '/admin/v1/workspaces/{ws}/sender-accounts/{oa}', operator: true, body: accountBody({ app_id: 'app\u0000' }) },
        { name: 'operator: key name', method: 'POST', path: '/admin/v1/workspaces/{ws}/api-keys', operator: true, body: { name: 'k\u0000', scopes: ['messages:send'] } },
        { name: 'operator: top-up note', method: 'POST', path: '/admin/v1/workspaces/{ws}/wallet/top-ups', operator: true, body: { amount: 1, note: 'n\u0000' } },
        { name: 'operator: redeliver since', method: 'POST', path: '/admin/v1/webhook-deliveries/redeliver-failed', operator: true, body: { failed_since: '2026-01-01T00:00:00Z', workspace_id: '\u0000' } },
      ]);
    });

    it('is refused in path parameters and query values', async () => {
      await expectRefusedAndNothingChanged([
        { name: 'message id', method: 'GET', path: '/api/v1/messages/{msg}%00', message: /path\.id/ },
        { name: 'cancel id', method: 'POST', path: '/api/v1/messages/{msg}%00/cancel' },
        { name: 'list tracking_id', method: 'GET', path: '/api/v1/messages?tracking_id=a%00b', message: /query\.tracking_id/ },
        { name: 'list phone', method: 'GET', path: '/api/v1/messages?phone=%00' },
        { name: 'list template_id', method: 'GET', path: '/api/v1/messages?template_id=%00' },
        { name: 'list oa_id', method: 'GET', path: '/api/v1/messages?oa_id=%00' },
        { name: 'list from', method: 'GET', path: '/api/v1/messages?from=2026-01-01%00' },
        { name: 'quota oa_id', method: 'GET', path: '/api/v1/quota?oa_id=%00' },
        { name: 'operator: workspace id', method: 'GET', path: '/admin/v1/workspaces/{ws}%00', operator: true },
        { name: 'operator: suspend', method: 'POST', path: '/admin/v1/workspaces/%00/suspend', operator: true },
        { name: 'operator: wallet', method: 'GET', path: '/admin/v1/workspaces/%00/wallet', operator: true },
        { name: 'operator: sender account id', method: 'PUT', path: '/admin/v1/workspaces/{ws}/sender-accounts/oa%00', operator: true, body: accountBody({}) },
        { name: 'operator: template id', method: 'PUT', path: '/admin/v1/workspaces/{ws}/templates/t%00', operator: true, body: templateBody({}) },
        { name: 'operator: templates of', method: 'GET', path: '/admin/v1/workspaces/%00/templates', operator: true },
        { name: 'operator: keys of', method: 'GET', path: '/admin/v1/workspaces/%00/api-keys', operator: true },
        { name: 'operator: delivery id', method: 'GET', path: '/admin/v1/webhook-deliveries/%00', operator: true },
        { name: 'operator: deliveries of', method: 'GET', path: '/admin/v1/webhook-deliveries?workspace_id=%00', operator: true },
      ]);
    });
  });

  describe('nesting depth', () => {
    it(`refuses a body nested more than ${MAX_BODY_NESTING_DEPTH} deep on every route, the cancel with an Idempotency-Key included`, async () => {
      const key = unique('nest-');
      await expectRefusedAndNothingChanged([
        { name: 'cancel, 100,000 arrays', method: 'POST', path: '/api/v1/messages/{msg}/cancel', rawBody: nestedArrays(100_000), headers: { 'idempotency-key': key }, message: /deep/ },
        { name: 'cancel, 50,000 objects', method: 'POST', path: '/api/v1/messages/{msg}/cancel', rawBody: nestedObjects(50_000), headers: { 'idempotency-key': key } },
        { name: 'cancel, one level too deep', method: 'POST', path: '/api/v1/messages/{msg}/cancel', rawBody: nestedArrays(MAX_BODY_NESTING_DEPTH + 1), headers: { 'idempotency-key': key } },
        { name: 'send', method: 'POST', path: '/api/v1/messages/send', rawBody: JSON.stringify(sendBody()).replace('"template_data":', `"extra":${nestedArrays(100_000)},"template_data":`) },
        { name: 'operator top-up', method: 'POST', path: '/admin/v1/workspaces/{ws}/wallet/top-ups', operator: true, rawBody: nestedObjects(10_000) },
      ]);
      // The key was never used: the cancel it names still works with it.
      const cancelled = await gateway.request('POST', `/api/v1/messages/${queuedId}/cancel`, { key: workspace.apiKey, headers: { 'idempotency-key': key } });
      expectStatus(cancelled, 200);
      queuedId = await queueOne(gateway, workspace, { send_at: vietnamWallClock(Date.now() + DAY_MS) });
    });

    it('counts only brackets outside strings, escaped quotes included', async () => {
      const templateId = unique('tplwide');
      await putTemplate(gateway, workspace.workspaceId, templateId, {
        oa_id: workspace.oaId,
        params: [{ name: 'text', type: 'STRING', required: true, max_length: 200, min_length: 1 }],
      });
      const text = `\\"${'[{'.repeat(60)}\\"`;
      const response = await gateway.request('POST', '/api/v1/messages/send', {
        key: workspace.apiKey,
        rawBody: `{"template_id":"${templateId}","phone":"0912345678","template_data":{"text":"${text}"}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectStatus(response, 202);
      expectStatus(await gateway.request('POST', `/api/v1/messages/${response.body.msg_id}/cancel`, { key: workspace.apiKey }), 200);
    });
  });

  describe('send_at', () => {
    it('refuses impossible offsets and years before 1970 (never read as 19xx)', async () => {
      const values = ['2026-12-01T10:00:00+99:99', '2026-12-01T10:00:00+24:00', '2026-12-01T10:00:00-07:60', '0000-01-01T00:00:00Z', '0050-06-01T12:00:00Z', '0099-12-31T23:59:59', '0026-12-01T10:00:00+07:00'];
      await expectRefusedAndNothingChanged(
        values.map((sendAt) => ({ name: `send_at ${sendAt}`, method: 'POST', path: '/api/v1/messages/send', body: sendBody({ send_at: sendAt }), type: 'invalid_send_at' as const })),
      );
      await expectRefusedAndNothingChanged([
        {
          name: 'batch send_at +99:99',
          method: 'POST',
          path: '/api/v1/messages/batch',
          body: { template_id: workspace.templateId, send_at: '2026-12-01T10:00:00+99:99', recipients: [{ phone: '0912345678', template_data: VALID_DATA }] },
          type: 'invalid_send_at',
        },
      ]);
    });
  });
});
