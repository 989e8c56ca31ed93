/**
 * Sending and cancelling from the console: the public API's verbs (same validation, charge, quota
 * and idempotency; the messages get source "console"), each change written to the activity log.
 * The log keeps what was done and to which template, never phone numbers or template data:
 * those are the recipients' personal data.
 */
import { recordAudit } from '../audit.ts';
import type { ConsoleUserCaller, Context, VerbCall } from '../context.ts';
import type { Idempotent, IdempotentOutcome } from '../idempotency.ts';
import { cancelMessage, type CancelledMessage } from '../messages.ts';
import { sendBatch, sendMessage, type AcceptedResult, type BatchInput, type SendInput } from '../send-messages.ts';

function queuedIds(result: AcceptedResult): string[] {
  return result.recipients.flatMap((recipient) => (recipient.status === 'queued' ? [recipient.messageId] : []));
}

/** A replayed answer changed nothing, so it is not logged again. */
async function recordUnlessReplayed(ctx: Context<ConsoleUserCaller>, outcome: { replayed: boolean }, change: Parameters<typeof recordAudit>[1]): Promise<void> {
  if (!outcome.replayed) await recordAudit(ctx, change);
}

/** POST /console/api/messages/send. */
export async function sendFromConsole({ ctx, input }: VerbCall<ConsoleUserCaller, SendInput>): Promise<IdempotentOutcome<AcceptedResult>> {
  const outcome = await sendMessage({ ctx, input });
  const [messageId] = queuedIds(outcome.result);
  await recordUnlessReplayed(ctx, outcome, {
    action: 'message.send',
    workspaceId: ctx.caller.workspaceId,
    target: messageId ?? null,
    before: null,
    after: { template_id: input.template_id, messages: 1, scheduled: outcome.result.scheduledAt !== null, api_key_id: input.api_key_id ?? null },
  });
  return outcome;
}

/** POST /console/api/messages/batch. */
export async function sendBatchFromConsole({ ctx, input }: VerbCall<ConsoleUserCaller, BatchInput>): Promise<IdempotentOutcome<AcceptedResult>> {
  const outcome = await sendBatch({ ctx, input });
  await recordUnlessReplayed(ctx, outcome, {
    action: 'message.batch',
    workspaceId: ctx.caller.workspaceId,
    target: null,
    before: null,
    after: {
      template_id: input.template_id,
      messages: outcome.result.acceptedCount,
      recipients: input.recipients.length,
      scheduled: outcome.result.scheduledAt !== null,
      api_key_id: input.api_key_id ?? null,
    },
  });
  return outcome;
}

/** POST /console/api/messages/{id}/cancel: deleted and refunded, like /api/v1's. */
export async function cancelFromConsole({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string } & Idempotent>): Promise<IdempotentOutcome<CancelledMessage>> {
  const outcome = await cancelMessage({ ctx, input });
  await recordUnlessReplayed(ctx, outcome, {
    action: 'message.cancel',
    workspaceId: ctx.caller.workspaceId,
    target: outcome.result.messageId,
    before: { status: 'queued' },
    after: null,
  });
  return outcome;
}
