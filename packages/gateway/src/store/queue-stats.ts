import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

export interface QueueStats {
  queued: number;
  due: number;
  sending: number;
  oldestDueAt: number | null;
}

/** Read at scrape time through the partial indexes on queued and sending rows only: cheap on any table size. */
export async function readQueueStats(db: Kysely<Database>, now: number): Promise<QueueStats> {
  const queued = await db
    .selectFrom('message_states')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min<number | null>('due_at').as('oldest')])
    .where('status', '=', 'queued')
    .executeTakeFirstOrThrow();
  const due = await db
    .selectFrom('message_states')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'queued')
    .where('due_at', '<=', now)
    .executeTakeFirstOrThrow();
  const sending = await db
    .selectFrom('message_states')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'sending')
    .where('lease_expires_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return { queued: Number(queued.count), due: Number(due.count), sending: Number(sending.count), oldestDueAt: queued.oldest === null ? null : Number(queued.oldest) };
}
