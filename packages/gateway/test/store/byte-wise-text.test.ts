/**
 * On PostgreSQL every text column of the gateway's tables compares byte by byte (COLLATE "C"),
 * whatever collation the database was made with: TMS compares text only as identifiers and codes,
 * and a linguistic collation made every comparison in its indexes dearer. The gateway runs here on
 * a database made with ICU's Vietnamese collation, where "a" sorts before "Z"; in bytes "Z" comes
 * first.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';

const VIETNAMESE_DATABASE = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'vi-VN' LOCALE 'C.UTF-8'";

describe.skipIf(!STORE_KINDS.includes('postgres'))('text columns on a database made with a Vietnamese collation (postgres)', () => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let client: pg.Client;

  beforeAll(async () => {
    gateway = await startTestGateway('postgres', { postgresDatabaseOptions: VIETNAMESE_DATABASE });
    workspace = await seedWorkspace(gateway);
    client = new pg.Client({ connectionString: gateway.database.env.DATABASE_URL });
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await gateway?.close();
  });

  it('the database itself sorts linguistically (the premise of the rest)', async () => {
    const { rows } = await client.query<{ linguistic: boolean }>(`SELECT 'a' < 'Z' AS linguistic`);
    expect(rows[0]!.linguistic).toBe(true);
  });

  it('accepts, finds and lists messages by tracking id and phone, and compares tracking ids byte by byte', async () => {
    const recipients = [
      { phone: '84912345678', tracking_id: 'a-1', template_data: { name: 'An', code: 'A1' } },
      { phone: '84987654321', tracking_id: 'Z-1', template_data: { name: 'Bình', code: 'Z1' } },
    ];
    const accepted = await gateway.request('POST', '/api/v1/messages/batch', { key: workspace.apiKey, body: { template_id: workspace.templateId, recipients } });
    expect(accepted.status).toBe(202);
    const [first, second] = accepted.body.results as { msg_id: string; tracking_id: string }[];

    const byTracking = await gateway.request('GET', '/api/v1/messages?tracking_id=Z-1', { key: workspace.apiKey });
    expect(byTracking.body.messages.map((message: { msg_id: string }) => message.msg_id)).toEqual([second!.msg_id]);
    const byPhone = await gateway.request('GET', '/api/v1/messages?phone=84912345678', { key: workspace.apiKey });
    expect(byPhone.body.messages.map((message: { msg_id: string }) => message.msg_id)).toEqual([first!.msg_id]);
    const byId = await gateway.request('GET', `/api/v1/messages/${second!.msg_id}`, { key: workspace.apiKey });
    expect(byId.body).toMatchObject({ msg_id: second!.msg_id, tracking_id: 'Z-1' });

    // The index by tracking id holds the column's order: "Z-1" first in bytes, "a-1" in Vietnamese.
    const { rows } = await client.query<{ smallest: string }>('SELECT min(tracking_id) AS smallest FROM messages WHERE workspace_id = $1', [workspace.workspaceId]);
    expect(rows[0]!.smallest).toBe('Z-1');
  });

  it('every text column of every table but the migrations record is COLLATE "C"', async () => {
    const { rows } = await client.query<{ column_name: string }>(`
      SELECT c.relname || '.' || a.attname AS column_name
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_collation co ON co.oid = a.attcollation
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        AND a.atttypid = 'text'::regtype AND c.relname <> 'schema_migrations' AND co.collname IS DISTINCT FROM 'C'
      ORDER BY 1`);
    expect(rows.map((row) => row.column_name)).toEqual([]);
  });
});
