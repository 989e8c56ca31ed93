import { GroupCommitter } from '../lib/group-commit.ts';
import { commitAcceptances, countMessages, type AcceptanceOutcome, type AcceptanceRequest } from '../store/acceptances.ts';
import { commitAcceptancesInOneStatement } from '../store/acceptances-postgres.ts';
import { isUniqueViolation, runInTransaction, type Store } from '../store/database.ts';

export type AcceptanceWriter = GroupCommitter<AcceptanceRequest, AcceptanceOutcome>;

/** Message rows per group: large enough to amortise the commit, small enough to keep latency low. */
const MAX_MESSAGES_PER_GROUP = 5_000;
const MAX_REQUESTS_PER_GROUP = 500;

/**
 * How long a workspace's groups go straight the general way after one of them did not fit in one
 * statement. That statement inserted all of its messages before it found out, then rolled them back:
 * a workspace out of money or of daily quota would otherwise pay that, and leave the dead rows, on
 * every batch it sends.
 */
const GENERAL_PATH_AFTER_REFUSAL_MS = 1_000;

/** Workspaces whose last one-statement group did not fit, with the time until which they skip it. */
class RecentRefusals {
  private readonly until = new Map<string, number>();

  has(requests: AcceptanceRequest[], now: number): boolean {
    return this.until.size > 0 && requests.some((request) => (this.until.get(request.workspaceId) ?? 0) > now);
  }

  remember(requests: AcceptanceRequest[], now: number): void {
    for (const [workspaceId, until] of this.until) if (until <= now) this.until.delete(workspaceId);
    for (const request of requests) this.until.set(request.workspaceId, now + GENERAL_PATH_AFTER_REFUSAL_MS);
  }
}

/**
 * PostgreSQL: first as one statement (store/acceptances-postgres.ts), which commits only when every
 * request of the group fits; when one does not, the group goes the general way, which decides
 * request by request.
 */
async function commitGroup(store: Store, clock: () => number, refusals: RecentRefusals, requests: AcceptanceRequest[]): Promise<AcceptanceOutcome[]> {
  if (store.dialect === 'postgres' && !refusals.has(requests, clock())) {
    const outcomes = await commitAcceptancesInOneStatement(store, requests, clock());
    if (outcomes) return outcomes;
    refusals.remember(requests, clock());
  }
  return await runInTransaction(store, (trx) => commitAcceptances(trx, store.dialect, requests, clock()));
}

/**
 * PostgreSQL groups committing at once, each on its own connection of the pool (TMS_PG_POOL_SIZE,
 * 10 by default), leaving the rest to reads and workers.
 */
const POSTGRES_GROUPS_IN_FLIGHT = 4;

/**
 * SQLite, while acceptances keep coming: how long a new group waits for more requests, and the
 * messages with which it goes at once (a batch of that size never waits). Single sends at 50
 * connections took about a sixth less CPU each (README, Architecture: Group commit). On PostgreSQL
 * the same wait measured no better: a workspace's requests gather while its group commits.
 */
const SQLITE_BUSY_LINGER = { ms: 3, untilWeight: 100 };

/** Recipients from which a request's group may commit alongside another of its workspace's. */
const OVERLAPPING_REQUEST_RECIPIENTS = 100;

/**
 * Groups of one workspace in flight at once, when large requests overlap: two kept PostgreSQL's
 * batches as fast as four (42,515 against about 43,000 recipients/s) and leave the other places in
 * flight to other workspaces.
 */
const OVERLAPPING_GROUPS_PER_WORKSPACE = 2;

/**
 * The group-commit writer for acceptances. A unique violation can only come from an idempotency
 * key that another process stored after our check; the group is then retried one by one, and the
 * request that collides is answered as an idempotency conflict.
 */
export function createAcceptanceWriter(store: Store, clock: () => number): AcceptanceWriter {
  const refusals = new RecentRefusals();
  return new GroupCommitter<AcceptanceRequest, AcceptanceOutcome>(
    async (requests) => {
      try {
        return await commitGroup(store, clock, refusals, requests);
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
        ? {
            partitionOf: (request) => request.workspaceId,
            overlaps: (request) => request.recipients.length >= OVERLAPPING_REQUEST_RECIPIENTS,
            overlappingGroupsPerPartition: OVERLAPPING_GROUPS_PER_WORKSPACE,
            maxInFlight: POSTGRES_GROUPS_IN_FLIGHT,
          }
        : { maxInFlight: 1, busyLinger: SQLITE_BUSY_LINGER }),
    },
  );
}
