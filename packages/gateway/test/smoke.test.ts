import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from './harness.ts';

describe.each(STORE_KINDS)('send and read back (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    workspace = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway.close());

  it('queues a message, charges the wallet and shows the record', async () => {
    const sent = await gateway.request('POST', '/api/v1/messages/send', {
      key: workspace.apiKey,
      body: { template_id: workspace.templateId, phone: '+84 912-345-678', template_data: VALID_DATA, tracking_id: 'order-1' },
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ msg_id: expect.stringMatching(/^msg_/), tracking_id: 'order-1', status: 'queued', scheduled_at: null });
    const record = await gateway.request('GET', `/api/v1/messages/${sent.body.msg_id}`, { key: workspace.apiKey });
    expect(record.body).toMatchObject({ phone: '84912345678', carrier: 'Vinaphone', status: 'queued', source: 'api', tracking_id: 'order-1' });
    const wallet = await gateway.admin('GET', `/workspaces/${workspace.workspaceId}/wallet`);
    expect(wallet.body.balance).toBe(1_000_000 - 300);
  });

  it('stores text byte for byte through the bulk insert, whatever characters it holds', async () => {
    const names = ['He said "hi" \\ ok', '{a,b} (c) NULL', "O'Brien, Nguyễn Văn Ánh", 'tab\there', 'NULL'];
    const response = await gateway.request('POST', '/api/v1/messages/batch', {
      key: workspace.apiKey,
      body: { template_id: workspace.templateId, recipients: names.map((name, index) => ({ phone: `09123400${index}0`, template_data: { name, code: `c${index}` } })) },
    });
    expect(response.status).toBe(202);
    const ids: string[] = response.body.results.map((result: { msg_id: string }) => result.msg_id);
    const rows = await gateway.runtime.store.db.selectFrom('messages').select(['id', 'template_data', 'rsa_phone', 'quota_day']).where('id', 'in', ids).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    ids.forEach((id, index) => {
      expect(JSON.parse(byId.get(id)!.template_data)).toEqual({ name: names[index], code: `c${index}` });
      expect(byId.get(id)!.rsa_phone).toBeNull();
      expect(byId.get(id)!.quota_day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    });
  });
});
