/**
 * POST /console/api/messages/csv-preview: a CSV of recipients as Excel writes it in Vietnam, each row
 * checked as a send would check it, with the cost, the balance and today's quota. Nothing is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { ISO_UTC_MS, expectError, expectStatus, listAll, putTemplate, queueOne, unique, walletOf } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';

describe.each(STORE_KINDS)('console CSV preview (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let developer: ConsoleSession;
  let withOptional: string;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { price: 300, balance: 50_000, dailyQuota: 40 });
    developer = await consoleUserIn(gateway, ws.workspaceId, 'developer');
    withOptional = unique('tplopt');
    await putTemplate(gateway, ws.workspaceId, withOptional, {
      oa_id: ws.oaId,
      price: 450,
      params: [
        { name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
        { name: 'note', type: 'STRING', required: false, max_length: 5, min_length: 2 },
      ],
    });
  });
  afterAll(async () => gateway?.close());

  const preview = (csv: string, templateId = ws.templateId, session = developer) =>
    session.request('POST', '/console/api/messages/csv-preview', { body: { template_id: templateId, csv } });

  it('reads an Excel file (BOM, semicolons, CRLF, quoted fields) and prices the valid rows', async () => {
    await queueOne(gateway, ws);
    const csv = '\uFEFFphone;name;code;tracking_id\r\n0912345678;"Nguyễn; Văn ""A""";A1;order-1\r\n+84 98 765 4321;Bình;B2;\r\n';
    const response = await preview(csv);
    expectStatus(response, 200);
    expect(response.body).toEqual({
      template_id: ws.templateId,
      columns: ['phone', 'name', 'code', 'tracking_id'],
      rows: [
        { row: 1, phone: '84912345678', template_data: { name: 'Nguyễn; Văn "A"', code: 'A1' }, tracking_id: 'order-1', problem: null },
        { row: 2, phone: '84987654321', template_data: { name: 'Bình', code: 'B2' }, tracking_id: null, problem: null },
      ],
      valid_rows: 2,
      invalid_rows: 0,
      unit_price: 300,
      total_cost: 600,
      balance: 50_000 - 300,
      quota: { oa_id: ws.oaId, name: expect.any(String), daily_quota: 40, used: 1, remaining: 39, resets_at: expect.stringMatching(ISO_UTC_MS) },
    });
  });

  it('reads comma-separated files with a line break inside a quoted field', async () => {
    const response = await preview('phone,code,name\n0912000001,C1,"Trần\nThị B"\n');
    expectStatus(response, 200);
    expect(response.body.columns).toEqual(['phone', 'code', 'name']);
    expect(response.body.rows).toEqual([{ row: 1, phone: '84912000001', template_data: { name: 'Trần\nThị B', code: 'C1' }, tracking_id: null, problem: null }]);
  });

  it('names the problem of each bad row and leaves it out of the cost', async () => {
    const csv = [
      'phone,name,code,tracking_id',
      '0912000001,An,A1,ok-1',
      ',Bình,B2,',
      '09x1,Cường,C3,',
      '0912000004,,D4,',
      '0912000005,Dũng,CODE-TOO-LONG,',
      '0912000006,Em,E6',
      '0912000007,Giang,G7,bad id',
      '',
      '0912000008,Hà,H8,ok-8',
      '',
    ].join('\r\n');
    const response = await preview(csv);
    expectStatus(response, 200);
    const problems = response.body.rows.map((row: { row: number; problem: string | null }) => [row.row, row.problem]);
    expect(problems).toEqual([
      [1, null],
      [2, expect.stringMatching(/^missing_phone/)],
      [3, expect.stringMatching(/phone/)],
      [4, expect.stringMatching(/^invalid_template_data: missing required parameter "name"/)],
      [5, expect.stringMatching(/^invalid_template_data: parameter "code" is 13 characters, more than its max_length 10/)],
      [6, expect.stringMatching(/3 fields but the header has 4/)],
      [7, expect.stringMatching(/^invalid_tracking_id/)],
      // Data row 8 is the empty line: not a recipient, but the numbering still counts it.
      [9, null],
    ]);
    expect(response.body).toMatchObject({ valid_rows: 2, invalid_rows: 6, total_cost: 600 });
    expect(response.body.rows[2].phone).toBe('09x1');
  });

  it('treats an empty cell of an optional param as not given, and checks a filled one', async () => {
    const response = await preview('phone,name,note\n0912000001,An,\n0912000002,Bình,x\n', withOptional);
    expectStatus(response, 200);
    expect(response.body.rows[0]).toMatchObject({ template_data: { name: 'An' }, problem: null });
    expect(response.body.rows[1].problem).toMatch(/parameter "note" is 1 characters, less than its min_length 2/);
    expect(response.body).toMatchObject({ unit_price: 450, total_cost: 450 });
  });

  it('refuses a header without a required param column, or with an unknown column, naming them', async () => {
    expectError(await preview('phone,name\n0912000001,An\n'), 'invalid_request', /missing CSV column "code"/);
    expectError(await preview('name,code\nAn,A1\n'), 'invalid_request', /missing CSV column "phone"/);
    expectError(await preview('phone,name,code,email,city\n0912000001,An,A1,a@b.vn,HN\n'), 'invalid_request', /unknown CSV columns "email", "city"/);
    expectError(await preview('phone,name,code,code\n'), 'invalid_request', /"code" appears more than once/);
    expectError(await preview(''), 'invalid_request', /header row/);
    expectError(await preview('phone,name,code\n0912000001,"An,A1\n'), 'invalid_request', /row 1: a quoted field never closes/);
  });

  it('refuses a file over 100,000 rows or 5 MB', async () => {
    const rows = `phone,name,code\n${'0912000001,An,A1\n'.repeat(100_001)}`;
    expectError(await preview(rows), 'invalid_request', /more than 100000 rows/);
    const big = `phone,name,code\n${`0912000001,${'x'.repeat(1_000)},A1\n`.repeat(5_300)}`;
    expectError(await preview(big), 'invalid_request', /larger than 5 MB/);
  });

  it('refuses a template that cannot be sent', async () => {
    const disabled = unique('tpldis');
    await putTemplate(gateway, ws.workspaceId, disabled, { oa_id: ws.oaId, status: 'DISABLE' });
    expectError(await preview('phone,name\n0912000001,An\n', disabled), 'template_not_enabled');
    expectError(await preview('phone,name\n0912000001,An\n', 'tpl_unknown'), 'template_not_found');
  });

  it('sends and charges nothing', async () => {
    const balance = (await walletOf(gateway, ws.workspaceId)).balance;
    const messages = (await listAll(gateway, ws)).length;
    expectStatus(await preview('phone,name,code\n0912000001,An,A1\n0912000002,Bình,B2\n'), 200);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(balance);
    expect((await listAll(gateway, ws)).length).toBe(messages);
  });

  it('is refused to a viewer', async () => {
    const viewer = await consoleUserIn(gateway, ws.workspaceId, 'viewer');
    expectError(await preview('phone,name,code\n0912000001,An,A1\n', ws.templateId, viewer), 'forbidden_role');
  });
});
