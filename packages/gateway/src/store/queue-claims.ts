/**
 * The claim of a database queue (message_states, webhook_deliveries): one UPDATE over the oldest due
 * rows that gives them to one worker, with a lease. PostgreSQL skips rows another worker is
 * claiming at the same moment (FOR UPDATE SKIP LOCKED); on SQLite the write lock taken by
 * BEGIN IMMEDIATE serialises claims, so the same statement needs no lock clause.
 *
 * Every later write of a claimed row names the lease its claim took, so a worker whose claim
 * expired and was taken over cannot overwrite the newer claim's row.
 */
import { sql, type RawBuilder } from 'kysely';
import { updateRows, type BulkTypes, type BulkUpdate } from './bulk-update.ts';
import { runInTransaction, type Dialect, type Store, type Transaction } from './database.ts';

export interface DueRowsClaim {
  table: 'message_states' | 'webhook_deliveries';
  /** What a claim writes on each row: the lease, one more attempt. */
  set: RawBuilder<unknown>;
  /**
   * Which rows are due. Status tests are written as literals: SQLite uses a partial index only
   * when the query's own text implies the index's condition.
   */
  due: RawBuilder<unknown>;
  /** The column that orders due rows, oldest first. */
  orderBy: 'due_at' | 'next_attempt_at';
  limit: number;
  /** The claimed rows' columns returned, comma-separated. */
  returning: string;
  /** Whether the claim must be on disk before the work starts (TransactionOptions). */
  durable: boolean;
}

/**
 * Claims the due rows and returns them, or, with `complete`, what it reads of them in the same
 * transaction (the queue row may hold only part of what the work needs).
 */
export function claimDueRows<Row>(store: Store, claim: DueRowsClaim): Promise<Row[]>;
export function claimDueRows<Claimed, Row>(store: Store, claim: DueRowsClaim, complete: (trx: Transaction, claimed: Claimed[]) => Promise<Row[]>): Promise<Row[]>;
export async function claimDueRows<Claimed, Row>(
  store: Store,
  claim: DueRowsClaim,
  complete?: (trx: Transaction, claimed: Claimed[]) => Promise<Row[]>,
): Promise<(Claimed | Row)[]> {
  const lock = store.dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const table = sql.raw(claim.table);
  return runInTransaction(store, async (trx) => {
    const result = await sql<Claimed>`
      UPDATE ${table}
      SET ${claim.set}
      WHERE id IN (
        SELECT id FROM ${table} WHERE ${claim.due} ORDER BY ${sql.raw(claim.orderBy)} LIMIT ${claim.limit} ${lock}
      )
      RETURNING ${sql.raw(claim.returning)}`.execute(trx);
    return complete === undefined || result.rows.length === 0 ? result.rows : complete(trx, result.rows);
  }, { durable: claim.durable });
}

/** How a queue's outcomes name their rows, and when a row still belongs to the claim that took it. */
export interface ClaimedRows<Outcome> {
  table: BulkUpdate['table'];
  claimOf(outcome: Outcome): { id: string; leaseExpiresAt: number | null };
  /** A condition on the row and x.claimed_lease, the lease its claim took. */
  stillHeld: RawBuilder<unknown>;
}

/** One kind of outcome as written: its own values per row (read as x.<name> by `set`). */
export interface OutcomeWrite<Outcome, Values extends Record<string, string | number | null>> {
  types: BulkTypes<Values>;
  valuesOf(outcome: Outcome): Values;
  set: RawBuilder<unknown>;
  returning?: readonly string[];
}

/** Writes outcomes on the rows whose claim still stands: one statement per chunk of rows. */
export function writeUnderClaim<Outcome, Values extends Record<string, string | number | null>, Returned = unknown>(
  trx: Transaction,
  dialect: Dialect,
  rows: ClaimedRows<NoInfer<Outcome>>,
  outcomes: readonly Outcome[],
  write: OutcomeWrite<Outcome, Values>,
): Promise<Returned[]> {
  return updateRows<Returned>(trx, dialect, {
    table: rows.table,
    types: { ...write.types, claimed_lease: 'bigint' },
    rows: outcomes.map((outcome) => {
      const claim = rows.claimOf(outcome);
      return { ...write.valuesOf(outcome), id: claim.id, claimed_lease: claim.leaseExpiresAt };
    }),
    set: write.set,
    where: rows.stillHeld,
    returning: write.returning,
  });
}
