import { GroupCommitter } from '../lib/group-commit.ts';
import { commitAcceptances, countMessages, type AcceptanceOutcome, type AcceptanceRequest } from '../store/acceptances.ts';
import { commitAcceptancesInOneStatement } from '../store/acceptances-postgres.ts';
import { isUniqueViolation, runInTransaction, type Store } from '../store/database.ts';

export type AcceptanceWriter = GroupCommitter<AcceptanceRequest, AcceptanceOutcome>;

/** Message rows per group: large enough to amortise the commit, small enough to keep latency low. */
const MAX_MESSAGES_PER_GROUP = 5_000;
const MAX_REQUESTS_PER_GROUP = 500;

/**
 * PostgreSQL: first as one statement (store/acceptances-postgres.ts), which commits only when every
 * request of the group fits; when one does not, the group goes the general way, which decides
 * request by request.
 */
async function commitGroup(store: Store, clock: () => number, requests: AcceptanceRequest[]): Promise<AcceptanceOutcome[]> {
  if (store.dialect === 'postgres') {
    const outcomes = await commitAcceptancesInOneStatement(store, requests, clock());
    if (outcomes) return outcomes;
  }
  return await runInTransaction(store, (trx) => commitAcceptances(trx, store.dialect, requests, clock()));
}

/**
 * PostgreSQL groups committing at once, each on its own connection of the pool (TMS_PG_POOL_SIZE,
 * 10 by default), leaving the rest to reads and workers.
 */
const POSTGRES_GROUPS_IN_FLIGHT = 4;

/** Recipients from which a request's group may commit alongside another of its workspace's. */
const OVERLAPPING_REQUEST_RECIPIENTS = 100;

/**
 * The group-commit writer for acceptances. A unique violation can only come from an idempotency
 * key that another process stored after our check; the group is then retried one by one, and the
 * request that collides is answered as an idempotency conflict.
 */
export function createAcceptanceWriter(store: Store, clock: () => number): AcceptanceWriter {
  return new GroupCommitter<AcceptanceRequest, AcceptanceOutcome>(
    async (requests) => {
      try {
        return await commitGroup(store, clock, requests);
      } catch (error) {
        if (requests.length === 1 && requests[0]!.idempotency && isUniqueViolation(error)) return [{ kind: 'idempotency_conflict' }];
        throw error;
      }
    },
    {
      maxItems: MAX_REQUESTS_PER_GROUP,
      maxWeight: MAX_MESSAGES_PER_GROUP,
      weigh: (request) => Math.max(1, countMessages(request)),
      // PostgreSQL: several groups at once. A workspace's small requests wait while a group of
      // them commits and go together in the next one: a statement's fixed cost (its plan, its
      // round trip, its commit) outweighs a few messages' inserts, and four groups of one
      // workspace in flight took PostgreSQL three times the CPU per single send. Large requests go
      // at once: a group inserts its messages before it locks the workspace's quota and wallet
      // rows (store/acceptances-postgres.ts), so their inserts run side by side.
      // SQLite has one writer: one group at a time.
      ...(store.dialect === 'postgres'
        ? { partitionOf: (request) => request.workspaceId, overlaps: (request) => request.recipients.length >= OVERLAPPING_REQUEST_RECIPIENTS, maxInFlight: POSTGRES_GROUPS_IN_FLIGHT }
        : { maxInFlight: 1 }),
    },
  );
}
