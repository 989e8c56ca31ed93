import type { Kysely } from 'kysely';
import { refundMessages } from './acceptances.ts';
import type { Transaction } from './database.ts';
import type { Database, MessageRow, MessageStatus } from './schema.ts';

export async function findMessage(db: Kysely<Database>, workspaceId: string, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export interface MessageFilter {
  trackingId?: string;
  phone?: string;
  status?: MessageStatus;
  templateId?: string;
  oaId?: string;
  from?: number;
  to?: number;
}

/** Newest first; asks for one row more than the page so the caller can tell whether more exist. */
export async function listMessages(
  db: Kysely<Database>,
  workspaceId: string,
  filter: MessageFilter,
  page: { limit: number; offset: number },
): Promise<MessageRow[]> {
  let query = db.selectFrom('messages').selectAll().where('workspace_id', '=', workspaceId);
  if (filter.trackingId !== undefined) query = query.where('tracking_id', '=', filter.trackingId);
  if (filter.phone !== undefined) query = query.where('phone', '=', filter.phone);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.templateId !== undefined) query = query.where('template_id', '=', filter.templateId);
  if (filter.oaId !== undefined) query = query.where('oa_id', '=', filter.oaId);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<=', filter.to);
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
}

export type CancelOutcome = { kind: 'cancelled' } | { kind: 'not_found' } | { kind: 'not_queued'; status: MessageStatus };

/**
 * Deletes a queued message and refunds it; the status check and the delete are one statement.
 * The message row is locked before its quota row and wallet: the lock order of acceptances.ts.
 */
export async function cancelQueuedMessage(trx: Transaction, workspaceId: string, id: string, now: number): Promise<CancelOutcome> {
  const deleted = await trx
    .deleteFrom('messages')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .returning(['id', 'workspace_id', 'price', 'oa_id', 'quota_day'])
    .executeTakeFirst();
  if (!deleted) {
    const existing = await trx.selectFrom('messages').select('status').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return existing ? { kind: 'not_queued', status: existing.status } : { kind: 'not_found' };
  }
  await refundMessages(trx, [deleted], now);
  return { kind: 'cancelled' };
}

export async function readQuotaReservations(db: Kysely<Database>, oaIds: string[], day: string): Promise<Map<string, number>> {
  if (oaIds.length === 0) return new Map();
  const rows = await db.selectFrom('quota_reservations').select(['oa_id', 'reserved']).where('oa_id', 'in', oaIds).where('day', '=', day).execute();
  return new Map(rows.map((row) => [row.oa_id, row.reserved]));
}
