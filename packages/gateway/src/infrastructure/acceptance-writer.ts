import { GroupCommitter } from '../lib/group-commit.ts';
import { commitAcceptances, countMessages, type AcceptanceOutcome, type AcceptanceRequest } from '../store/acceptances.ts';
import { isUniqueViolation, runInTransaction, type Store } from '../store/database.ts';

export type AcceptanceWriter = GroupCommitter<AcceptanceRequest, AcceptanceOutcome>;

/** Message rows per group: large enough to amortise the commit, small enough to keep latency low. */
const MAX_MESSAGES_PER_GROUP = 5_000;
const MAX_REQUESTS_PER_GROUP = 500;

/**
 * The group-commit writer for acceptances. A unique violation can only come from an idempotency
 * key that another process stored after our check; the group is then retried one by one, and the
 * request that collides is answered as an idempotency conflict.
 */
export function createAcceptanceWriter(store: Store, clock: () => number): AcceptanceWriter {
  return new GroupCommitter<AcceptanceRequest, AcceptanceOutcome>(
    async (requests) => {
      try {
        return await runInTransaction(store, (trx) => commitAcceptances(trx, store.dialect, requests, clock()));
      } catch (error) {
        if (requests.length === 1 && requests[0]!.idempotency && isUniqueViolation(error)) return [{ kind: 'idempotency_conflict' }];
        throw error;
      }
    },
    {
      maxItems: MAX_REQUESTS_PER_GROUP,
      maxWeight: MAX_MESSAGES_PER_GROUP,
      weigh: (request) => Math.max(1, countMessages(request)),
      // One group at a time on both stores. Measured on PostgreSQL with 4 in flight: slower (1.9k
      // vs 2.7k sends/s), because groups of one workspace queue on its wallet row lock.
      maxInFlight: 1,
    },
  );
}
