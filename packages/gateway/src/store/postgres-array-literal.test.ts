/**
 * Array parameters built by postgres-array-literal.ts, read back by a real PostgreSQL server:
 * every element must arrive as it was sent. PostgreSQL only: runs when TMS_TEST_DATABASE_URL is set.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPostgresBigintArray, toPostgresTextArray } from './postgres-array-literal.ts';

const POSTGRES_URL = process.env.TMS_TEST_DATABASE_URL;

describe.runIf(POSTGRES_URL)('array parameters for PostgreSQL', () => {
  let client: pg.Client;

  beforeAll(async () => {
    client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  async function readBack(values: (string | null)[]): Promise<(string | null)[]> {
    const { rows } = await client.query<{ values: (string | null)[] }>('SELECT $1::text[] AS values', [toPostgresTextArray(values)]);
    return rows[0]!.values;
  }

  it('sends text exactly: quotes, backslashes, braces, commas, blanks, the word NULL and Vietnamese', async () => {
    const values = ['{"customer_name":"Nguyễn Văn A","order":"#123"}', 'back\\slash and \\" both', '{,}', '', ' padded ', 'NULL', 'null', 'Đặt hàng thành công', null, '\\', '"'];
    expect(await readBack(values)).toEqual(values);
  });

  it('sends text whose backslashes read like JSON escapes as typed', async () => {
    const values = ['\\u0041', '\\n', 'C:\\temp\\ready', 'ends with \\'];
    expect(await readBack(values)).toEqual(values);
  });

  it('sends control characters as themselves, not as their JSON escapes', async () => {
    const values = ['line\nbreak', 'tab\there', 'bell\u0007', 'form\ffeed', null, 'plain'];
    expect(await readBack(values)).toEqual(values);
  });

  it('sends whole numbers and NULL for bigint columns, the largest safe integer included', async () => {
    const values = [0, -1, 1_764_500_000_000, Number.MAX_SAFE_INTEGER, null, undefined];
    const { rows } = await client.query<{ values: (string | null)[] }>('SELECT $1::bigint[]::text[] AS values', [toPostgresBigintArray(values)]);
    expect(rows[0]!.values).toEqual(['0', '-1', '1764500000000', String(Number.MAX_SAFE_INTEGER), null, null]);
  });

  it('sends an empty column as an empty array', async () => {
    const { rows } = await client.query<{ length: number }>('SELECT cardinality($1::text[]) AS length', [toPostgresTextArray([])]);
    expect(rows[0]!.length).toBe(0);
  });
});
