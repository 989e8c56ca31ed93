import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from './database.ts';

/**
 * SQLite's index of a workspace's messages by recipient: keyed by the workspace, the number's last
 * two digits (`phone % 100`), then created_at and id, and holding the number itself. Keyed by the
 * whole number, each new message wrote its entry to a random page, and every commit wrote about
 * one whole page to the log per message. Keyed this way, a workspace's new messages go to the ends
 * of at most 100 runs, and a lookup reads the run of its number's ending newest first, comparing
 * whole numbers inside the index (1% of the workspace at most, never the table). The key is
 * arithmetic, not a function such as substr(): SQLite gives every multi-row statement that calls a
 * function a statement journal, a copy of each page it touches. PostgreSQL keeps its index by the
 * whole number, then created_at: its commits log changed rows, not whole pages, and an index by the
 * number's ending measured slower there.
 */
export const SQLITE_PHONE_INDEX = 'messages_by_workspace_phone_suffix';

/** That a message (aliased m) went to `phone`, written so that the store's phone index serves it. */
export function sentToPhone(dialect: Dialect, phone: string): RawBuilder<boolean> {
  // Both sides in SQL, so the given number's ending is computed exactly as the index's.
  if (dialect === 'sqlite') return sql<boolean>`m.phone % 100 = ${phone} % 100 AND m.phone = ${phone}`;
  return sql<boolean>`m.phone = ${phone}`;
}
