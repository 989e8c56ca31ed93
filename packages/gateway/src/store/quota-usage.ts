import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Our side of one sender account's daily quota for one Vietnam day. */
export interface QuotaUsage {
  /** Everything accepted for the day and not cancelled or refunded (quota_reservations). */
  reserved: number;
  /** Of those, the messages that have not reached the platform yet: queued, or claimed and in flight. */
  outstanding: number;
}

/**
 * Reads both figures in ONE statement, so they come from one snapshot on either store: a message
 * accepted or sent between two separate reads would otherwise be counted on one side only.
 *
 * Both counts walk the small partial indexes of queued (`message_states_due`) and claimed
 * (`message_states_leased`) rows, never the message history. `queuedDueBefore` bounds the walk over
 * queued rows so that messages scheduled weeks ahead are not read on every lookup; the caller
 * chooses it late enough to take in this day's messages that a retry pushed past midnight.
 */
export async function readQuotaUsage(db: Kysely<Database>, input: { oaId: string; day: string; queuedDueBefore: number }): Promise<QuotaUsage> {
  const { oaId, day, queuedDueBefore } = input;
  const result = await sql<{ reserved: number | string | null; queued: number | string; sending: number | string }>`
    SELECT
      (SELECT reserved FROM quota_reservations WHERE oa_id = ${oaId} AND day = ${day}) AS reserved,
      (SELECT count(*) FROM message_states
        WHERE status = 'queued' AND due_at < ${queuedDueBefore} AND oa_id = ${oaId} AND quota_day = ${day}) AS queued,
      (SELECT count(*) FROM message_states
        WHERE status = 'sending' AND lease_expires_at IS NOT NULL AND oa_id = ${oaId} AND quota_day = ${day}) AS sending`.execute(db);
  const row = result.rows[0];
  return {
    reserved: Number(row?.reserved ?? 0),
    outstanding: Number(row?.queued ?? 0) + Number(row?.sending ?? 0),
  };
}
