import { normalizePhone } from '../lib/phone.ts';
import { parseDateTime } from '../lib/vietnam-time.ts';
import { runInTransaction } from '../store/database.ts';
import { claimIdempotencyKeys, idempotencyRecordOf } from '../store/idempotency.ts';
import { insertRows } from '../store/bulk-insert.ts';
import { cancelQueuedMessage, findMessage, listMessages as selectMessages } from '../store/messages.ts';
import type { MessageRow, MessageStatus } from '../store/schema.ts';
import type { WorkspaceCaller, VerbCall } from './context.ts';
import { ApiError } from './errors.ts';
import { IDEMPOTENCY_CONFLICT, runIdempotently, type Idempotent, type IdempotentOutcome } from './idempotency.ts';

export async function getMessage({ ctx, input }: VerbCall<WorkspaceCaller, { id: string }>): Promise<MessageRow> {
  const row = await findMessage(ctx.store.db, ctx.caller.workspaceId, input.id);
  if (!row) throw new ApiError('message_not_found', `message ${input.id} not found`);
  return row;
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

/** One page of messages, newest first. */
export interface MessagePage {
  messages: MessageRow[];
  limit: number;
  offset: number;
  hasMore: boolean;
}

export async function listMessages({ ctx, input: query }: VerbCall<WorkspaceCaller, ListQuery>): Promise<MessagePage> {
  const limit = query.limit ?? 50;
  const offset = query.offset ?? 0;
  const rows = await selectMessages(
    ctx.store,
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
  return { messages: rows.slice(0, limit), limit, offset, hasMore: rows.length > limit };
}

/** What a cancel did: the message is gone and refunded. */
export interface CancelledMessage {
  messageId: string;
}

/** POST /messages/{id}/cancel: only a queued message; it is deleted and refunded in one transaction. */
export async function cancelMessage({ ctx, input }: VerbCall<WorkspaceCaller, { id: string } & Idempotent>): Promise<IdempotentOutcome<CancelledMessage>> {
  const { id } = input;
  const { store, clock } = ctx;
  return runIdempotently(ctx, input.idempotency, (claim) =>
    runInTransaction(store, async (trx) => {
      const now = clock();
      if (claim && (await claimIdempotencyKeys(trx, [{ workspaceId: ctx.caller.workspaceId, key: claim.key }], now)).size > 0) {
        return IDEMPOTENCY_CONFLICT;
      }
      const outcome = await cancelQueuedMessage(trx, ctx.caller.workspaceId, id, now);
      if (outcome.kind === 'not_found') throw new ApiError('message_not_found', `message ${id} not found`);
      if (outcome.kind === 'not_queued') throw new ApiError('message_not_queued', `message ${id} is ${outcome.status}; only queued messages can be cancelled`);
      const result: CancelledMessage = { messageId: id };
      if (claim) await insertRows(trx, store.dialect, 'idempotency_records', [idempotencyRecordOf(ctx.caller.workspaceId, claim, result, now)]);
      return result;
    }),
  );
}
