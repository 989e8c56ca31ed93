/**
 * Array parameters built by toPostgresArrayLiteral, read back by a real PostgreSQL server: every
 * element must arrive as it was sent. PostgreSQL only: runs when TMS_TEST_DATABASE_URL is set.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPostgresArrayLiteral } from './postgres-array-literal.ts';

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

  it('sends text exactly: quotes, backslashes, braces, commas, blanks, the word NULL, line breaks and Vietnamese', async () => {
    const values = [
      '{"customer_name":"Nguyễn Văn A","order":"#123"}',
      'back\\slash and \\" both',
      '{,}',
      '',
      ' padded ',
      'NULL',
      'null',
      'line\nbreak\ttab',
      'Đặt hàng thành công',
      null,
      '\\',
      '"',
    ];
    const { rows } = await client.query<{ values: (string | null)[] }>('SELECT $1::text[] AS values', [toPostgresArrayLiteral(values)]);
    expect(rows[0]!.values).toEqual(values);
  });

  it('sends whole numbers and NULL for bigint columns, the largest safe integer included', async () => {
    const values = [0, -1, 1_764_500_000_000, Number.MAX_SAFE_INTEGER, null, undefined];
    const { rows } = await client.query<{ values: (string | null)[] }>('SELECT $1::bigint[]::text[] AS values', [toPostgresArrayLiteral(values)]);
    expect(rows[0]!.values).toEqual(['0', '-1', '1764500000000', String(Number.MAX_SAFE_INTEGER), null, null]);
  });

  it('sends an empty column as an empty array', async () => {
    const { rows } = await client.query<{ length: number }>('SELECT cardinality($1::text[]) AS length', [toPostgresArrayLiteral([])]);
    expect(rows[0]!.length).toBe(0);
  });
});
