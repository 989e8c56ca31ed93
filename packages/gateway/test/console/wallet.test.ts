/** The console's wallet page: GET /console/api/wallet and the ledger export GET /console/api/wallet/ledger.csv. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSortableId } from '../../src/lib/ids.ts';
import { parseCsv } from '../../src/lib/csv.ts';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { VIETNAM_OFFSET_MS, expectError, expectStatus, queueOne } from '../api/helpers.ts';
import { consoleUserIn, type ConsoleSession } from '../console-support.ts';

const HEADER = 'created_at,kind,amount,balance_after,message_count,reference,note';
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

/** An ISO UTC time as the export writes it: Vietnam wall-clock time, to the second. */
function vietnamText(isoUtc: string): string {
  return new Date(Date.parse(isoUtc) + VIETNAM_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** The exact bytes of a GET (fetch's text() would drop the byte order mark), read as UTF-8 with it kept. */
async function download(gateway: TestGateway, session: ConsoleSession, path: string): Promise<{ status: number; headers: Headers; bytes: Buffer; text: string }> {
  const response = await fetch(`${gateway.url}${path}`, { headers: { cookie: session.cookie } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes, text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes) };
}

function csvRecords(text: string): string[][] {
  const parsed = parseCsv(text);
  if (parsed.kind !== 'parsed') throw new Error(`not CSV: ${parsed.kind}`);
  return parsed.csv.records;
}

describe.each(STORE_KINDS)('console wallet (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;
  let viewer: ConsoleSession;
  let developer: ConsoleSession;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { price: 300, balance: 10_000 });
    await pause();
    expectStatus(await gateway.admin('POST', `/workspaces/${ws.workspaceId}/wallet/top-ups`, { amount: 5_000, note: 'Chuyển khoản, "tháng 11"' }), 201);
    await pause();
    expectStatus(await gateway.admin('POST', `/workspaces/${ws.workspaceId}/wallet/top-ups`, { amount: 1_000, note: '=HYPERLINK("http://evil")' }), 201);
    await pause();
    await queueOne(gateway, ws);
    await pause();
    const cancelled = await queueOne(gateway, ws, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
    await pause();
    expectStatus(await gateway.request('POST', `/api/v1/messages/${cancelled}/cancel`, { key: ws.apiKey }), 200);
    viewer = await consoleUserIn(gateway, ws.workspaceId, 'viewer');
    developer = await consoleUserIn(gateway, ws.workspaceId, 'developer');
  });
  afterAll(async () => gateway?.close());

  describe('GET /console/api/wallet', () => {
    it('shows the balance and the ledger, newest first', async () => {
      const response = await viewer.request('GET', '/console/api/wallet');
      expectStatus(response, 200);
      expect(response.body.balance).toBe(10_000 + 5_000 + 1_000 - 300);
      expect(response.body.has_more).toBe(false);
      expect(response.body.ledger.map((entry: { kind: string; amount: number; balance_after: number }) => [entry.kind, entry.amount, entry.balance_after])).toEqual([
        ['refund', 300, 15_700],
        ['charge', -300, 15_400],
        ['charge', -300, 15_700],
        ['top_up', 1_000, 16_000],
        ['top_up', 5_000, 15_000],
        ['top_up', 10_000, 10_000],
      ]);
      expect(response.body.ledger[4]).toEqual({
        id: expect.stringMatching(/^led_/),
        kind: 'top_up',
        amount: 5_000,
        balance_after: 15_000,
        message_count: 0,
        reference: null,
        note: 'Chuyển khoản, "tháng 11"',
        created_at: expect.any(String),
      });
    });

    it('pages with limit and offset', async () => {
      const first = await viewer.request('GET', '/console/api/wallet?limit=2');
      const second = await viewer.request('GET', '/console/api/wallet?limit=2&offset=2');
      const last = await viewer.request('GET', '/console/api/wallet?limit=2&offset=4');
      expect(first.body.ledger.map((entry: { kind: string }) => entry.kind)).toEqual(['refund', 'charge']);
      expect(second.body.ledger.map((entry: { kind: string }) => entry.kind)).toEqual(['charge', 'top_up']);
      expect([first.body.has_more, second.body.has_more, last.body.has_more]).toEqual([true, true, false]);
      expectError(await viewer.request('GET', '/console/api/wallet?limit=0'), 'invalid_request');
    });

    it("shows only the signed-in user's workspace", async () => {
      const other = await seedWorkspace(gateway, { balance: 42 });
      const response = await (await consoleUserIn(gateway, other.workspaceId, 'owner')).request('GET', '/console/api/wallet');
      expect(response.body.balance).toBe(42);
      expect(response.body.ledger).toHaveLength(1);
    });
  });

  describe('GET /console/api/wallet/ledger.csv', () => {
    it('is a UTF-8 CSV attachment with a BOM, oldest first, in Vietnam time', async () => {
      const json = (await viewer.request('GET', '/console/api/wallet')).body.ledger.slice().reverse();
      const response = await download(gateway, developer, '/console/api/wallet/ledger.csv');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${ws.workspaceId}.csv"`);
      expect(response.bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
      expect(response.text.startsWith(`\uFEFF${HEADER}\r\n`)).toBe(true);
      const records = csvRecords(response.text);
      expect(records[0]).toEqual(HEADER.split(','));
      expect(records.slice(1)).toEqual(
        json.map((entry: { created_at: string; kind: string; amount: number; balance_after: number; message_count: number; reference: string | null; note: string | null }) => [
          vietnamText(entry.created_at),
          entry.kind,
          String(entry.amount),
          String(entry.balance_after),
          String(entry.message_count),
          entry.reference ?? '',
          entry.note === '=HYPERLINK("http://evil")' ? `'${entry.note}` : (entry.note ?? ''),
        ]),
      );
      // A note with a comma and quotes is quoted, its quotes doubled; a formula is made inert.
      expect(response.text).toContain(',"Chuyển khoản, ""tháng 11"""\r\n');
      expect(response.text).toContain(`,"'=HYPERLINK(""http://evil"")"\r\n`);
    });

    it('keeps only the entries between from and to', async () => {
      const json = (await viewer.request('GET', '/console/api/wallet')).body.ledger.slice().reverse();
      const [, secondTopUp, thirdTopUp, firstCharge] = json;
      const response = await download(gateway, viewer, `/console/api/wallet/ledger.csv?from=${secondTopUp.created_at}&to=${firstCharge.created_at}`);
      expect(response.status).toBe(200);
      const kinds = csvRecords(response.text).slice(1).map((record) => [record[1], record[2]]);
      expect(kinds).toEqual([
        ['top_up', String(secondTopUp.amount)],
        ['top_up', String(thirdTopUp.amount)],
        ['charge', '-300'],
      ]);
      const empty = await download(gateway, viewer, '/console/api/wallet/ledger.csv?from=2099-01-01T00:00:00');
      expect(empty.text).toBe(`\uFEFF${HEADER}\r\n`);
    });

    it('refuses a bad bound before sending anything', async () => {
      expectError(await viewer.request('GET', '/console/api/wallet/ledger.csv?from=last-week'), 'invalid_date_range');
      expectError(await viewer.request('GET', '/console/api/wallet/ledger.csv?to=2026-13-01T00:00:00'), 'invalid_date_range');
    });

    it('exports a ledger longer than one read, every entry once, in order', async () => {
      const long = await seedWorkspace(gateway, { balance: 0 });
      const start = Date.parse('2026-01-01T00:00:00Z');
      const entries = Array.from({ length: 4_321 }, (_, index) => ({
        id: createSortableId('led', start + index * 1_000),
        workspace_id: long.workspaceId,
        kind: 'top_up' as const,
        amount: index + 1,
        balance_after: ((index + 1) * (index + 2)) / 2,
        message_count: 0,
        reference: null,
        note: null,
        created_at: start + index * 1_000,
      }));
      for (let offset = 0; offset < entries.length; offset += 500) {
        await gateway.runtime.store.db.insertInto('wallet_ledger').values(entries.slice(offset, offset + 500)).execute();
      }
      const session = await consoleUserIn(gateway, long.workspaceId, 'viewer');
      const records = csvRecords((await session.request('GET', '/console/api/wallet/ledger.csv')).text).slice(1);
      expect(records).toHaveLength(4_321);
      expect(records.map((record) => Number(record[2]))).toEqual(entries.map((entry) => entry.amount));
      expect(records[0]![0]).toBe('2026-01-01 07:00:00');
    });
  });
});
