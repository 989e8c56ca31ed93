/**
 * PostgreSQL's named statements on a real server: a statement the gateway runs repeatedly is
 * prepared once on its connection (PostgreSQL lists it in pg_prepared_statements), `false` in the
 * setting prepares nothing, a lookup of messages by a list of ids is never prepared (a generic plan
 * made while the table was small scans it whole however it grows), and a prepared statement that a
 * migration made stale (its table gained a column) costs one retry of the transaction, not a failure.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { openStore, runInTransaction, type Store } from '../../src/store/database.ts';
import { findMessage, listMessages } from '../../src/store/messages.ts';
import { claimDueMessages } from '../../src/store/dispatch-queue.ts';
import { markMessagesDelivered } from '../../src/store/delivery-events.ts';
import { eraseRsaPhones } from '../../src/store/message-records.ts';
import { eventMessagesByIdQuery } from '../../src/store/platform-events.ts';
import { migrate } from '../../src/store/migrate.ts';
import { STORE_KINDS, createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

const LABEL_OF = 'SELECT label FROM scratch_rows WHERE id = $1';

describe.skipIf(!STORE_KINDS.includes('postgres'))('prepared statements (postgres)', () => {
  let database: TestDatabase;
  let store: Store | undefined;

  /** A store of one connection, so every statement below runs on the same one. */
  const open = (preparedStatements: string): Store => {
    const { database: config } = parseConfig({ ...gatewayEnvironment(database), TMS_PG_POOL_SIZE: '1', TMS_PG_PREPARED_STATEMENTS: preparedStatements });
    store = openStore(config);
    return store;
  };
  const preparedTexts = async (on: Store): Promise<string[]> =>
    (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(on.db)).rows.map((row) => row.statement);
  const labelOf = async (on: Store, id: string): Promise<string | undefined> => (await sql<{ label: string }>`SELECT label FROM scratch_rows WHERE id = ${id}`.execute(on.db)).rows[0]?.label;

  beforeEach(async () => {
    database = await createTestDatabase('postgres');
    const setup = open('false');
    await sql`CREATE TABLE scratch_rows (id text PRIMARY KEY, label text NOT NULL)`.execute(setup.db);
    await sql`INSERT INTO scratch_rows (id, label) VALUES ('a', 'first'), ('b', 'second')`.execute(setup.db);
    await setup.close();
  });
  afterEach(async () => {
    await store?.close();
    await database?.drop();
  });

  it('prepares a statement run repeatedly on its connection, and its answers stay right', async () => {
    const prepared = open('true');
    expect(await labelOf(prepared, 'a')).toBe('first');
    expect(await preparedTexts(prepared)).not.toContain(LABEL_OF);
    const answers = [await labelOf(prepared, 'b'), await labelOf(prepared, 'a'), await labelOf(prepared, 'b'), await labelOf(prepared, 'zz')];
    expect(answers).toEqual(['second', 'first', 'second', undefined]);
    expect(await preparedTexts(prepared)).toContain(LABEL_OF);
  });

  it('runs a text of several commands (a transaction that does not wait for the disk) as often as asked', async () => {
    const prepared = open('true');
    for (let run = 0; run < 5; run += 1) {
      await runInTransaction(prepared, (trx) => sql`UPDATE scratch_rows SET label = ${`run ${run}`} WHERE id = 'a'`.execute(trx), { durable: false });
    }
    expect(await labelOf(prepared, 'a')).toBe('run 4');
  });

  it('never prepares a list, whose plan depends on its filter, limit and offset, but does a lookup by id', async () => {
    const prepared = open('true');
    await migrate(prepared);
    for (let run = 0; run < 6; run += 1) {
      expect(await listMessages(prepared, 'ws_a', { status: run % 2 === 0 ? 'failed' : 'delivered' }, { limit: 50, offset: run * 10 })).toEqual([]);
      expect(await findMessage(prepared.db, 'ws_a', `msg_${run}`)).toBeUndefined();
    }
    const texts = await preparedTexts(prepared);
    expect(texts.some((text) => text.includes('from "messages" as "m"'))).toBe(true);
    expect(texts.filter((text) => text.includes('ORDER BY') && text.includes('OFFSET'))).toEqual([]);
  });

  it('never prepares a lookup of messages by a list of ids, which it would plan as a scan of the table while the table was small', async () => {
    const prepared = open('true');
    await migrate(prepared);
    const ids = ['msg_a', 'msg_b'];
    for (let run = 0; run < 6; run += 1) {
      expect((await eventMessagesByIdQuery(prepared.dialect, ids).execute(prepared.db)).rows).toEqual([]);
      expect(await claimDueMessages(prepared, { now: run, limit: 10, leaseMs: 1000 })).toEqual([]);
      await runInTransaction(prepared, async (trx) => {
        await markMessagesDelivered(trx, prepared.dialect, ids.map((id) => ({ id, deliveredAt: run, providerMsgId: `zns_${id}` })), run);
        await eraseRsaPhones(trx, prepared.dialect, ids);
      });
    }
    const texts = await preparedTexts(prepared);
    expect(texts.some((text) => text.includes('message_states'))).toBe(true);
    expect(texts.filter((text) => /\bFROM messages WHERE id = ANY\b|\bUPDATE messages\b/.test(text))).toEqual([]);
  });

  it('prepares nothing when the setting is false', async () => {
    const unprepared = open('false');
    for (const id of ['a', 'b', 'a', 'b', 'a']) await labelOf(unprepared, id);
    expect(await preparedTexts(unprepared)).toEqual([]);
  });

  it('runs a transaction again, and right, when a migration changed what a prepared statement returns', async () => {
    const prepared = open('true');
    const readAll = () => runInTransaction(prepared, async (trx) => (await sql<Record<string, unknown>>`SELECT * FROM scratch_rows WHERE id > ${''} ORDER BY id`.execute(trx)).rows);
    for (let run = 0; run < 4; run += 1) await readAll();
    expect(await preparedTexts(prepared)).toContain('SELECT * FROM scratch_rows WHERE id > $1 ORDER BY id');
    await sql`ALTER TABLE scratch_rows ADD COLUMN note text NOT NULL DEFAULT 'added'`.execute(prepared.db);
    expect(await readAll()).toEqual([
      { id: 'a', label: 'first', note: 'added' },
      { id: 'b', label: 'second', note: 'added' },
    ]);
  });
});
