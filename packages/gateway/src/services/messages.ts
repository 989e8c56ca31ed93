import { normalizePhone } from '../lib/phone.ts';
import { formatUtc, formatUtcOrNull, parseDateTime } from '../lib/vietnam-time.ts';
import { runInTransaction } from '../store/database.ts';
import { claimIdempotencyKeys } from '../store/idempotency.ts';
import { insertRows } from '../store/bulk-insert.ts';
import { cancelQueuedMessage, findMessage, listMessages as selectMessages } from '../store/messages.ts';
import type { MessageRow, MessageStatus } from '../store/schema.ts';
import type { RequestContext } from './context.ts';
import { ApiError } from './errors.ts';
import { IDEMPOTENCY_CONFLICT, runIdempotently, type IdempotencyInput, type ServiceResponse } from './idempotency.ts';

/** The message record of docs/api.md. */
export function presentMessage(row: MessageRow) {
  return {
    msg_id: row.id,
    tracking_id: row.tracking_id,
    status: row.status,
    phone: row.phone,
    carrier: row.carrier,
    source: row.source,
    template_id: row.template_id,
    oa_id: row.oa_id,
    provider_msg_id: row.provider_msg_id,
    error_code: row.error_code,
    error_message: row.error_message,
    error_reason: row.error_reason,
    scheduled_at: formatUtcOrNull(row.scheduled_at),
    sent_at: formatUtcOrNull(row.sent_at),
    delivered_at: formatUtcOrNull(row.delivered_at),
    failed_at: formatUtcOrNull(row.failed_at),
    created_at: formatUtc(row.created_at),
  };
}

export async function getMessage(input: { ctx: RequestContext; id: string }) {
  const row = await findMessage(input.ctx.deps.store.db, input.ctx.caller.workspaceId, input.id);
  if (!row) throw new ApiError('message_not_found', `message ${input.id} not found`);
  return presentMessage(row);
}

export interface ListQuery {
  tracking_id?: string;
  phone?: string;
  status?: MessageStatus;
  template_id?: string;
  oa_id?: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

function parseBound(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parseDateTime(value);
  if (parsed === null) throw new ApiError('invalid_date_range', `${name} "${value}" is not an ISO 8601 date-time`);
  return parsed;
}

export async function listMessages(input: { ctx: RequestContext; query: ListQuery }) {
  const { ctx, query } = input;
  const limit = query.limit ?? 50;
  const offset = query.offset ?? 0;
  const rows = await selectMessages(
    ctx.deps.store.db,
    ctx.caller.workspaceId,
    {
      trackingId: query.tracking_id,
      phone: query.phone === undefined ? undefined : normalizePhone(query.phone),
      status: query.status,
      templateId: query.template_id,
      oaId: query.oa_id,
      from: parseBound('from', query.from),
      to: parseBound('to', query.to),
    },
    { limit, offset },
  );
  const page = rows.slice(0, limit);
  return { messages: page.map(presentMessage), limit, offset, count: page.length, has_more: rows.length > limit };
}

/** POST /messages/{id}/cancel: only a queued message; it is deleted and refunded in one transaction. */
export async function cancelMessage(input: { ctx: RequestContext; id: string; idempotency?: IdempotencyInput }): Promise<ServiceResponse> {
  const { ctx, id } = input;
  const { store, clock } = ctx.deps;
  return runIdempotently(ctx, input.idempotency, (claim) =>
    runInTransaction(store, async (trx) => {
      const now = clock();
      if (claim && (await claimIdempotencyKeys(trx, [{ workspaceId: ctx.caller.workspaceId, key: claim.key }], now)).size > 0) {
        return IDEMPOTENCY_CONFLICT;
      }
      const outcome = await cancelQueuedMessage(trx, ctx.caller.workspaceId, id, now);
      if (outcome.kind === 'not_found') throw new ApiError('message_not_found', `message ${id} not found`);
      if (outcome.kind === 'not_queued') throw new ApiError('message_not_queued', `message ${id} is ${outcome.status}; only queued messages can be cancelled`);
      const response = { statusCode: 200, body: { cancelled: true, msg_id: id } };
      if (claim) {
        await insertRows(trx, store.dialect, 'idempotency_records', [
          {
            workspace_id: ctx.caller.workspaceId,
            idempotency_key: claim.key,
            request_hash: claim.requestHash,
            status_code: response.statusCode,
            response_body: JSON.stringify(response.body),
            created_at: now,
            expires_at: claim.expiresAt,
          },
        ]);
      }
      return response;
    }),
  );
}
