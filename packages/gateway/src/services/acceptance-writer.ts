import { GroupCommitter } from '../lib/group-commit.ts';
import { commitAcceptances, type AcceptanceOutcome, type AcceptanceRequest } from '../store/acceptances.ts';
import { isUniqueViolation, runInTransaction, type Store } from '../store/database.ts';

export type AcceptanceWriter = GroupCommitter<AcceptanceRequest, AcceptanceOutcome>;

/** Message rows per group: large enough to amortise the commit, small enough to keep latency low. */
const MAX_MESSAGES_PER_GROUP = 5_000;
const MAX_REQUESTS_PER_GROUP = 500;
const POSTGRES_GROUPS_IN_FLIGHT = 4;

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
      weigh: (request) => Math.max(1, request.messages.length),
      // SQLite commits synchronously on this thread: one at a time. PostgreSQL waits on the server.
      maxInFlight: store.dialect === 'postgres' ? POSTGRES_GROUPS_IN_FLIGHT : 1,
    },
  );
}
