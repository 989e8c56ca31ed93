/**
 * A message lives in two rows with the same id: its row of `messages`, fixed at acceptance, and its
 * row of `message_states`, which every step of a send changes (migration 0013). These are the
 * columns of each, and a message read whole: `messages m JOIN message_states s ON s.id = m.id`.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect, Transaction } from './database.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';
import type { AcceptedMessageRow, Database, MessageRow, MessageStateRow } from './schema.ts';

export const ACCEPTED_MESSAGE_COLUMNS = [
  'id',
  'workspace_id',
  'api_key_id',
  'tracking_id',
  'mode',
  'phone',
  'carrier',
  'rsa_phone',
  'source',
  'template_id',
  'oa_id',
  'template_data',
  'price',
  'quota_day',
  'scheduled_at',
  'created_at',
] as const satisfies readonly (keyof AcceptedMessageRow)[];

/** The state's own columns, without the copies of the message's fixed ones. */
const CHANGING_STATE_COLUMNS = [
  'status',
  'due_at',
  'attempts',
  'lease_expires_at',
  'unconfirmed_since',
  'provider_msg_id',
  'sent_at',
  'status_checked_at',
  'delivered_at',
  'failed_at',
  'error_code',
  'error_message',
  'error_reason',
  'updated_at',
] as const satisfies readonly (keyof MessageStateRow)[];

export const MESSAGE_STATE_COLUMNS = ['id', 'workspace_id', 'oa_id', 'quota_day', 'created_at', ...CHANGING_STATE_COLUMNS] as const satisfies readonly (keyof MessageStateRow)[];

/** The select list of a whole message (MessageRow) from `messages m JOIN message_states s`. */
export const MESSAGE_RECORD_COLUMNS = sql.raw([...ACCEPTED_MESSAGE_COLUMNS.map((column) => `m.${column}`), ...CHANGING_STATE_COLUMNS.map((column) => `s.${column}`)].join(', '));

/** Whole messages, for Kysely queries: filter and order on m.* or s.*. */
export function selectMessageRecords(db: Kysely<Database>) {
  return db
    .selectFrom('messages as m')
    .innerJoin('message_states as s', 's.id', 'm.id')
    .selectAll('m')
    .select(CHANGING_STATE_COLUMNS.map((column) => `s.${column}` as const))
    .$castTo<MessageRow>();
}

/**
 * `column` is one of `ids`, with one statement text whatever their number (a JSON array on SQLite,
 * a text[] on PostgreSQL). A statement that looks messages up this way is planned per run
 * (PLANNED_PER_RUN): prepared, PostgreSQL's generic plan for it, made while the table was small, is
 * a scan of the whole table, and it stays one as the table grows until the next ANALYZE (in
 * `tms start`'s loop on a fresh database, 12 ms a lookup against 0.2).
 */
export function isOneOf(dialect: Dialect, column: RawBuilder<unknown>, ids: readonly string[]): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`${column} = ANY(${[...ids]}::text[])` : sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/** Erases the RSA ciphertext of the phone of these messages: the platform has it, or never will. */
export async function eraseRsaPhones(trx: Transaction, dialect: Dialect, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`${PLANNED_PER_RUN} UPDATE messages SET rsa_phone = NULL WHERE ${isOneOf(dialect, sql`id`, ids)} AND rsa_phone IS NOT NULL`.execute(trx);
}
