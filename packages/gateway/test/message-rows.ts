/**
 * Messages written straight into a test store, as acceptance writes them: each message's row of
 * `messages` and its row of `message_states`.
 */
import type { Kysely } from 'kysely';
import { ACCEPTED_MESSAGE_COLUMNS, MESSAGE_STATE_COLUMNS } from '../src/store/message-records.ts';
import type { Database, MessageRow } from '../src/store/schema.ts';

function pick<Column extends keyof MessageRow>(row: MessageRow, columns: readonly Column[]): Pick<MessageRow, Column> {
  return Object.fromEntries(columns.map((column) => [column, row[column]])) as Pick<MessageRow, Column>;
}

export async function insertMessages(db: Kysely<Database>, rows: readonly MessageRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += 250) {
    const chunk = rows.slice(start, start + 250);
    await db.insertInto('messages').values(chunk.map((row) => pick(row, ACCEPTED_MESSAGE_COLUMNS))).execute();
    await db.insertInto('message_states').values(chunk.map((row) => pick(row, MESSAGE_STATE_COLUMNS))).execute();
  }
}
