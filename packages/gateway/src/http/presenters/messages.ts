import type { Static } from 'typebox';
import { formatUtc, formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { MessageRow } from '../../services/vocabulary.ts';
import type { MessagePage } from '../../services/messages.ts';
import type { AcceptedResult } from '../../services/send-messages.ts';
import type { BatchResponse, BatchResultItem, MessageRecord } from '../routes/messages/shared-schemas.ts';

/** The message record of docs/api.md. */
export function presentMessage(row: MessageRow): Static<typeof MessageRecord> {
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

export function presentMessagePage(page: MessagePage) {
  return { messages: page.messages.map(presentMessage), limit: page.limit, offset: page.offset, count: page.messages.length, has_more: page.hasMore };
}

/** The 202 of a single send: its one message. */
export function presentAcceptedSend(result: AcceptedResult) {
  const [recipient] = result.recipients;
  if (recipient?.status !== 'queued') throw new Error('an accepted single send has its message queued');
  return { msg_id: recipient.messageId, tracking_id: recipient.messageTrackingId, status: 'queued' as const, scheduled_at: formatUtcOrNull(result.scheduledAt) };
}

/** The 202 of a batch or RSA send: one result per recipient, in request order. */
export function presentAcceptedRecipients(result: AcceptedResult): Static<typeof BatchResponse> {
  // An absent phone or tracking_id is left undefined, which the response serializer leaves out;
  // spreading optional fields instead costs a runtime call per recipient.
  const results = result.recipients.map((recipient): Static<typeof BatchResultItem> => {
    if (recipient.status === 'queued') return { phone: recipient.phone, msg_id: recipient.messageId, tracking_id: recipient.messageTrackingId, status: 'queued' };
    return { phone: recipient.phone, tracking_id: recipient.trackingId, status: 'error', error: recipient.refusal };
  });
  return { accepted: result.acceptedCount, total: results.length, scheduled_at: formatUtcOrNull(result.scheduledAt), results };
}
