/**
 * The console overview's reads of one workspace's messages. Each stays on the index
 * message_states_by_workspace_status (workspace_id, status, created_at), so it costs what the counted
 * days hold, not what the table holds (the overview must answer fast on a million messages).
 */
import type { Kysely } from 'kysely';
import { selectMessageRecords } from './message-records.ts';
import type { Database, MessageRow, MessageStatus } from './schema.ts';

/** Messages of one status created in [from, to). */
export interface CountWindow {
  status: MessageStatus;
  from: number;
  to: number;
}

/**
 * Counts one workspace's messages in each window, in one statement of one scalar count per
 * window: each is a range of the index and nothing else. One query grouping a week by day would
 * compute the day of every row and sort them, about ten times slower on SQLite.
 */
export async function countMessagesInWindows(db: Kysely<Database>, workspaceId: string, windows: readonly CountWindow[]): Promise<number[]> {
  if (windows.length === 0) return [];
  const row = await db
    .selectNoFrom((eb) =>
      windows.map((window, index) =>
        eb
          .selectFrom('message_states')
          .select((inner) => inner.fn.countAll<number | string>().as('count'))
          .where('workspace_id', '=', workspaceId)
          .where('status', '=', window.status)
          .where('created_at', '>=', window.from)
          .where('created_at', '<', window.to)
          .as(`window_${index}`),
      ),
    )
    .executeTakeFirstOrThrow();
  const counts = row as Record<string, number | string | null>;
  return windows.map((_, index) => Number(counts[`window_${index}`] ?? 0));
}

/**
 * The newest failed messages, by created_at alone: a second sort key (id) would make both stores
 * sort every failed row instead of reading the index backwards and stopping at `limit`.
 */
export async function listLatestFailures(db: Kysely<Database>, workspaceId: string, limit: number): Promise<MessageRow[]> {
  return selectMessageRecords(db).where('s.workspace_id', '=', workspaceId).where('s.status', '=', 'failed').orderBy('s.created_at', 'desc').limit(limit).execute();
}
