import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from './database.ts';

/**
 * The index that finds a workspace's messages to one recipient: keyed by the workspace, the
 * number's last two digits, then created_at and id, and holding the number itself. Keyed by the
 * whole number, each new message wrote its entry to a random page, and a commit wrote one index
 * page per message: half the cost of a 500-recipient batch on SQLite. Keyed this way, a
 * workspace's new messages go to the ends of at most 100 runs, and a lookup reads the one run of
 * its number's ending, newest first, comparing whole numbers inside the index (1% of the
 * workspace at most, never the table).
 */
export const PHONE_INDEX = 'messages_by_workspace_phone_suffix';

/** The last two characters of a number, in each store's SQL: the expression the index is keyed by. */
function phoneSuffix(dialect: Dialect, value: RawBuilder<unknown>): RawBuilder<string> {
  return dialect === 'sqlite' ? sql<string>`substr(${value}, -2)` : sql<string>`right(${value}, 2)`;
}

/** That a message (aliased m) went to `phone`, written so that PHONE_INDEX serves it. */
export function sentToPhone(dialect: Dialect, phone: string): RawBuilder<boolean> {
  const given = dialect === 'sqlite' ? sql`${phone}` : sql`${phone}::text`;
  return sql<boolean>`${phoneSuffix(dialect, sql`m.phone`)} = ${phoneSuffix(dialect, given)} AND m.phone = ${phone}`;
}
