/**
 * SQL of the delivery-report outbox (webhook_deliveries) and its attempt log (webhook_attempts).
 *
 * A claim is the queue claim of queue-claims.ts, as for the message queue. It moves
 * next_attempt_at to the end of the lease, so a worker that dies leaves rows that simply fall due
 * again; no reconciler is needed. Every later write of a claimed row names the claim's
 * lease_expires_at, so a worker whose claim expired cannot overwrite a newer claim.
 *
 * `status = 'pending'` and `'failed'` are written as literals where a partial index serves the query:
 * SQLite uses a partial index only when the query's own text implies the index's condition.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { sortableIdFloor } from '../lib/ids.ts';
import { insertRows } from './bulk-insert.ts';
import { runInTransaction, type Store } from './database.ts';
import { claimDueRows, writeUnderClaim, type ClaimedRows } from './queue-claims.ts';
import { WEBHOOK_DELIVERY_STATUSES, type ApiKeyRow, type Database, type WebhookAttemptRow, type WebhookDeliveryRow, type WebhookDeliveryStatus } from './schema.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';

export type ClaimedDelivery = Pick<
  WebhookDeliveryRow,
  'id' | 'message_id' | 'workspace_id' | 'api_key_id' | 'url' | 'body' | 'attempts' | 'attempts_at_redelivery' | 'created_at'
> & { lease_expires_at: number };

/** Every delivery id begins with this and its creation time (createSortableId): the purge relies on it. */
export const DELIVERY_ID_PREFIX = 'dlv';

const CLAIMED_COLUMNS = 'id, message_id, workspace_id, api_key_id, url, body, attempts, attempts_at_redelivery, created_at, lease_expires_at';

/**
 * Claims up to `limit` due deliveries for one worker: one more attempt, a lease. Rows whose URL
 * is in `skipUrls` (receivers this worker already keeps busy) are left to others.
 */
export async function claimDueDeliveries(
  store: Store,
  input: { now: number; limit: number; leaseMs: number; skipUrls: readonly string[] },
): Promise<ClaimedDelivery[]> {
  const skip = input.skipUrls.length > 0 ? sql`AND url NOT IN (${sql.join(input.skipUrls)})` : sql``;
  const leaseUntil = input.now + input.leaseMs;
  const rows = await claimDueRows<ClaimedDelivery>(store, {
    table: 'webhook_deliveries',
    set: sql`attempts = attempts + 1, lease_expires_at = ${leaseUntil}, next_attempt_at = ${leaseUntil}, updated_at = ${input.now}`,
    due: sql`status = 'pending' AND next_attempt_at <= ${input.now} ${skip}`,
    orderBy: 'next_attempt_at',
    limit: input.limit,
    returning: CLAIMED_COLUMNS,
    // Reports go at least once: a claim lost to a power failure only makes the attempt again.
    durable: false,
  });
  return rows.map((row) => ({ ...row, attempts: Number(row.attempts), attempts_at_redelivery: Number(row.attempts_at_redelivery) }));
}

export type SigningKey = Pick<ApiKeyRow, 'id' | 'encrypted_key' | 'webhook_url' | 'revoked_at'>;

/** The keys that sign a claim's deliveries, with what says whether their webhooks still go. */
export async function findSigningKeys(db: Kysely<Database>, apiKeyIds: readonly string[]): Promise<SigningKey[]> {
  if (apiKeyIds.length === 0) return [];
  return db.selectFrom('api_keys').select(['id', 'encrypted_key', 'webhook_url', 'revoked_at']).where('id', 'in', apiKeyIds).execute();
}

/** Which claim a write is for: the row and the lease it was claimed with. */
export interface ClaimRef {
  id: string;
  leaseExpiresAt: number;
}

export type DeliveryOutcome =
  | { kind: 'delivered'; claim: ClaimRef; statusCode: number; attempt: WebhookAttemptRow }
  | { kind: 'retry'; claim: ClaimRef; nextAttemptAt: number; statusCode: number | null; error: string; attempt: WebhookAttemptRow }
  | { kind: 'failed'; claim: ClaimRef; statusCode: number | null; error: string; attempt: WebhookAttemptRow }
  /** Its key was revoked or lost its webhook URL: nothing was sent. */
  | { kind: 'cancelled'; claim: ClaimRef; reason: string }
  /** Given back unattempted or cut short by a stopping worker: due again now, the attempt not counted. */
  | { kind: 'released'; claim: ClaimRef; attempt: WebhookAttemptRow | null };

type OutcomeOf<Kind extends DeliveryOutcome['kind']> = Extract<DeliveryOutcome, { kind: Kind }>;

function ofKind<Kind extends DeliveryOutcome['kind']>(outcomes: readonly DeliveryOutcome[], kind: Kind): OutcomeOf<Kind>[] {
  return outcomes.filter((outcome): outcome is OutcomeOf<Kind> => outcome.kind === kind);
}

const CLAIMED_DELIVERIES: ClaimedRows<DeliveryOutcome> = {
  table: 'webhook_deliveries',
  claimOf: (outcome) => outcome.claim,
  stillHeld: sql`webhook_deliveries.lease_expires_at = x.claimed_lease`,
};

/** An attempt's answer as written on its delivery. */
const ANSWER_TYPES = { status_code: 'integer', error_text: 'text' } as const;
const answerOf = (outcome: OutcomeOf<'retry' | 'failed'>) => ({ status_code: outcome.statusCode, error_text: outcome.error });

/**
 * Records outcomes of many attempts in one transaction, with their attempt log rows: one
 * statement per kind of outcome (per chunk of rows). A row whose claim has since expired and been
 * taken by another worker is left alone (its lease differs); the attempt that happened is still logged.
 */
export async function recordDeliveryOutcomes(store: Store, outcomes: DeliveryOutcome[], now: number): Promise<void> {
  if (outcomes.length === 0) return;
  const { dialect } = store;
  await runInTransaction(store, async (trx) => {
    await writeUnderClaim(trx, dialect, CLAIMED_DELIVERIES, ofKind(outcomes, 'delivered'), {
      types: { status_code: 'integer' },
      valuesOf: (outcome) => ({ status_code: outcome.statusCode }),
      set: sql`status = 'delivered', delivered_at = ${now}, last_status_code = x.status_code, last_error = NULL, lease_expires_at = NULL, updated_at = ${now}`,
    });
    await writeUnderClaim(trx, dialect, CLAIMED_DELIVERIES, ofKind(outcomes, 'retry'), {
      types: { ...ANSWER_TYPES, next_attempt: 'bigint' },
      valuesOf: (outcome) => ({ ...answerOf(outcome), next_attempt: outcome.nextAttemptAt }),
      set: sql`next_attempt_at = x.next_attempt, last_status_code = x.status_code, last_error = x.error_text, lease_expires_at = NULL, updated_at = ${now}`,
    });
    await writeUnderClaim(trx, dialect, CLAIMED_DELIVERIES, ofKind(outcomes, 'failed'), {
      types: ANSWER_TYPES,
      valuesOf: answerOf,
      set: sql`status = 'failed', failed_at = ${now}, last_status_code = x.status_code, last_error = x.error_text, lease_expires_at = NULL, updated_at = ${now}`,
    });
    await writeUnderClaim(trx, dialect, CLAIMED_DELIVERIES, ofKind(outcomes, 'cancelled'), {
      types: { reason: 'text' },
      valuesOf: (outcome) => ({ reason: outcome.reason }),
      set: sql`status = 'cancelled', last_error = x.reason, attempts = attempts - 1, lease_expires_at = NULL, updated_at = ${now}`,
    });
    await writeUnderClaim(trx, dialect, CLAIMED_DELIVERIES, ofKind(outcomes, 'released'), {
      types: {},
      valuesOf: () => ({}),
      set: sql`attempts = attempts - 1, next_attempt_at = ${now}, lease_expires_at = NULL, updated_at = ${now}`,
    });
    const attempts = outcomes.flatMap((outcome) => ('attempt' in outcome && outcome.attempt ? [outcome.attempt] : []));
    await insertRows(trx, store.dialect, 'webhook_attempts', attempts);
    // Reports go at least once: an outcome lost to a power failure only makes its attempt again.
  }, { durable: false });
}

export interface DeliveryFilter {
  workspaceId?: string;
  status?: WebhookDeliveryStatus;
  /** created_at at or after. */
  since?: number;
  /** created_at before. */
  until?: number;
  limit: number;
  offset: number;
}

/** One page of deliveries, newest first. */
export function listDeliveriesQuery(db: Kysely<Database>, filter: DeliveryFilter) {
  const { workspaceId, status } = filter;
  if (workspaceId === undefined) return newestOfEveryWorkspaceQuery(db, filter);
  if (status === undefined) return newestOfWorkspaceQuery(db, { ...filter, workspaceId });
  const query = db.selectFrom('webhook_deliveries').modifyFront(PLANNED_PER_RUN).selectAll().where('workspace_id', '=', workspaceId).where('status', '=', status);
  return newestPage(inCreationWindow(query, filter), filter);
}

export async function listDeliveries(db: Kysely<Database>, filter: DeliveryFilter): Promise<WebhookDeliveryRow[]> {
  return listDeliveriesQuery(db, filter).execute();
}

function inCreationWindow<Query extends SelectQueryBuilder<Database, 'webhook_deliveries', WebhookDeliveryRow>>(query: Query, filter: DeliveryFilter): Query {
  let bounded = query;
  if (filter.since !== undefined) bounded = bounded.where('created_at', '>=', filter.since) as Query;
  if (filter.until !== undefined) bounded = bounded.where('created_at', '<', filter.until) as Query;
  return bounded;
}

function newestPage<Query extends SelectQueryBuilder<Database, 'webhook_deliveries', WebhookDeliveryRow>>(query: Query, page: { limit: number; offset: number }) {
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset);
}

/**
 * A workspace's deliveries of every status, newest first: the newest page of each status through
 * webhook_deliveries_by_workspace (workspace, status, creation time), merged. Read in one range,
 * they would be every delivery the workspace kept (30 days of reports) sorted for one page.
 */
function newestOfWorkspaceQuery(db: Kysely<Database>, filter: DeliveryFilter & { workspaceId: string }) {
  const window = { limit: filter.limit + filter.offset, offset: 0 };
  const [first, ...others] = WEBHOOK_DELIVERY_STATUSES.map((status) => {
    const ofStatus = db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', filter.workspaceId).where('status', '=', status);
    return db.selectFrom(newestPage(inCreationWindow(ofStatus, filter), window).as('of_status')).selectAll();
  });
  const merged = others.reduce((union, next) => union.unionAll(next), first!);
  return db
    .selectFrom(merged.as('newest'))
    .modifyFront(PLANNED_PER_RUN)
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit)
    .offset(filter.offset);
}

/**
 * Every workspace's deliveries (the operator's list), newest first by id: an id begins with its
 * creation time, so the primary key gives the order and a page reads only its rows, where ordering
 * by creation time would sort the whole outbox (30 days of every workspace's reports) for each
 * page. The orders differ only for ids made while the clock stood behind the process's last id,
 * which carry that id's time. For the same reason an id is never below its creation time's floor,
 * which bounds `since` on the key too.
 */
function newestOfEveryWorkspaceQuery(db: Kysely<Database>, filter: DeliveryFilter) {
  let query = db.selectFrom('webhook_deliveries').modifyFront(PLANNED_PER_RUN).selectAll();
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.since !== undefined) query = query.where('id', '>=', sortableIdFloor(DELIVERY_ID_PREFIX, filter.since));
  return inCreationWindow(query, filter).orderBy('id', 'desc').limit(filter.limit).offset(filter.offset);
}

export async function findDelivery(db: Kysely<Database>, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The delivery report of one message, if it has one (there is at most one: message_id is unique). */
export async function findDeliveryOfMessage(db: Kysely<Database>, workspaceId: string, messageId: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('message_id', '=', messageId).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** A delivery's attempt log, oldest first. */
export async function listAttempts(db: Kysely<Database>, deliveryId: string): Promise<WebhookAttemptRow[]> {
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();
}

/** What a redelivery sets: pending now, to the key's current URL, the retry ladder from its start. */
function redeliveryChanges(now: number) {
  return sql`status = 'pending', attempts_at_redelivery = attempts, next_attempt_at = ${now}, lease_expires_at = NULL,
    last_status_code = NULL, last_error = NULL, delivered_at = NULL, failed_at = NULL, updated_at = ${now}`;
}

/**
 * One delivery again (any status but pending), to `url`: the row as this update left it (a worker
 * may attempt it at once), or undefined when it is pending or unknown.
 */
export async function redeliverDelivery(db: Kysely<Database>, input: { id: string; url: string; now: number }): Promise<WebhookDeliveryRow | undefined> {
  const result = await sql<WebhookDeliveryRow>`
    UPDATE webhook_deliveries SET ${redeliveryChanges(input.now)}, url = ${input.url}
    WHERE id = ${input.id} AND status <> 'pending'
    RETURNING *`.execute(db);
  return result.rows[0];
}

/**
 * Every delivery that failed at or after `since` (optionally of one workspace) again, each to its
 * key's current URL. Deliveries whose key is revoked or has no URL now are left failed and counted.
 */
export async function redeliverFailedSince(store: Store, input: { since: number; workspaceId?: string; now: number }): Promise<{ redelivered: number; skipped: number }> {
  const workspace = input.workspaceId === undefined ? sql`` : sql`AND workspace_id = ${input.workspaceId}`;
  const keyStillSends = sql`EXISTS (SELECT 1 FROM api_keys k WHERE k.id = webhook_deliveries.api_key_id AND k.revoked_at IS NULL AND k.webhook_url IS NOT NULL)`;
  return runInTransaction(store, async (trx) => {
    const updated = await sql`
      UPDATE webhook_deliveries
      SET ${redeliveryChanges(input.now)}, url = (SELECT k.webhook_url FROM api_keys k WHERE k.id = webhook_deliveries.api_key_id)
      WHERE status = 'failed' AND failed_at >= ${input.since} ${workspace} AND ${keyStillSends}`.execute(trx);
    const left = await sql<{ count: number | string }>`
      SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'failed' AND failed_at >= ${input.since} ${workspace}`.execute(trx);
    return { redelivered: Number(updated.numAffectedRows ?? 0), skipped: Number(left.rows[0]?.count ?? 0) };
  });
}

/** Which key's pending deliveries: through the key's workspace's pending ones (webhook_deliveries_by_workspace). */
interface KeyOfDeliveries {
  workspaceId: string;
  apiKeyId: string;
}

const pendingOfKey = (key: KeyOfDeliveries) => sql`status = 'pending' AND workspace_id = ${key.workspaceId} AND api_key_id = ${key.apiKeyId}`;

/** The statements of key changes, exported for their plan test (test/store/outbox-plans.test.ts). */
export const readdressStatement = (input: KeyOfDeliveries & { url: string; now: number }) => sql`
  UPDATE webhook_deliveries SET url = ${input.url}, updated_at = ${input.now}
  WHERE ${pendingOfKey(input)}`;

export const cancelStatement = (input: KeyOfDeliveries & { reason: string; now: number }) => sql`
  UPDATE webhook_deliveries SET status = 'cancelled', last_error = ${input.reason}, lease_expires_at = NULL, updated_at = ${input.now}
  WHERE ${pendingOfKey(input)}`;

/** A key's webhook URL changed: its pending deliveries go to the new one. */
export async function readdressPendingDeliveries(db: Kysely<Database>, input: KeyOfDeliveries & { url: string; now: number }): Promise<number> {
  const result = await readdressStatement(input).execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export const REVOKED_KEY_REASON = 'cancelled: the API key was revoked';
export const REMOVED_URL_REASON = 'cancelled: the API key has no webhook URL any more';

/**
 * A key was revoked or lost its webhook URL: its pending deliveries are cancelled. The lease is
 * cleared too, so the outcome of an attempt in flight right now no longer matches the row and
 * cannot turn it back (that attempt still appears in the attempt log).
 */
export async function cancelPendingDeliveries(db: Kysely<Database>, input: KeyOfDeliveries & { reason: string; now: number }): Promise<number> {
  const result = await cancelStatement(input).execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export interface OutboxStats {
  pending: number;
  due: number;
  inFlight: number;
  failed: number;
  oldestPendingCreatedAt: number | null;
}

/** For the metrics scrape: the partial indexes on pending and failed rows keep these cheap. */
export async function readOutboxStats(db: Kysely<Database>, now: number): Promise<OutboxStats> {
  const pending = await sql<{ count: number | string; oldest: number | string | null }>`
    SELECT count(*) AS count, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'`.execute(db);
  const due = await sql<{ count: number | string }>`
    SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now}`.execute(db);
  const inFlight = await sql<{ count: number | string }>`
    SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ${now} AND lease_expires_at > ${now}`.execute(db);
  const failed = await sql<{ count: number | string }>`
    SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'failed' AND failed_at IS NOT NULL`.execute(db);
  const oldest = pending.rows[0]?.oldest;
  return {
    pending: Number(pending.rows[0]?.count ?? 0),
    due: Number(due.rows[0]?.count ?? 0),
    inFlight: Number(inFlight.rows[0]?.count ?? 0),
    failed: Number(failed.rows[0]?.count ?? 0),
    oldestPendingCreatedAt: oldest === null || oldest === undefined ? null : Number(oldest),
  };
}

const FINISHED = sql<boolean>`status IN ('delivered', 'failed', 'cancelled')`;

/** The next finished deliveries the purge deletes, exported for its plan test (test/store/outbox-plans.test.ts). */
export function purgeableDeliveriesQuery(db: Kysely<Database>, input: { before: number; limit: number }) {
  return db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('id', '<', sortableIdFloor(DELIVERY_ID_PREFIX, input.before))
    .where(FINISHED)
    .where('updated_at', '<', input.before)
    .orderBy('id')
    .limit(input.limit);
}

/**
 * Deletes up to `limit` finished deliveries (delivered, failed, cancelled) last changed before
 * `before`, with their attempt logs, in one transaction. Pending ones are never touched.
 * Returns how many deliveries went.
 *
 * It walks the primary key, oldest first: a delivery id begins with its creation time, and a
 * delivery last changed before `before` was created before it, so it lies below that time's ids
 * (one made while the clock stood behind the process's last id has that id's time, and waits that
 * much longer). An index of finished deliveries by their last change cost an entry for every
 * report. The few it passes over each time are those still pending or redelivered since.
 */
export async function purgeFinishedDeliveries(store: Store, input: { before: number; limit: number }): Promise<number> {
  return runInTransaction(store, async (trx) => {
    const finished = await purgeableDeliveriesQuery(trx, input).execute();
    if (finished.length === 0) return 0;
    // Deleted with the status test again (a redelivery may have made one pending meanwhile), and
    // only the attempt logs of what was deleted go with them.
    const deleted = await trx
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', finished.map((row) => row.id))
      .where(FINISHED)
      .returning('id')
      .execute();
    if (deleted.length > 0) await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deleted.map((row) => row.id)).execute();
    return deleted.length;
  });
}
