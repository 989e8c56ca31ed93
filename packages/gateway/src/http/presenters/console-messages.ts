import type { Static } from 'typebox';
import { formatUtc } from '../../lib/vietnam-time.ts';
import type { CsvPreview } from '../../services/console/csv-upload.ts';
import type { MessageHistory, TimelineEvent } from '../../services/console/message-history.ts';
import type { CsvPreviewSchema } from '../routes/console/sending.ts';
import type { MessageHistorySchema, TimelineEventSchema } from '../routes/console/messages.ts';
import { presentQuotaView } from './console-catalog.ts';
import { presentConsoleDeliveryDetail } from './console-webhook-deliveries.ts';
import { presentMessage } from './messages.ts';

function presentTimelineEvent(event: TimelineEvent): Static<typeof TimelineEventSchema> {
  const at = formatUtc(event.at);
  if (!event.failure) return { event: event.event, at };
  return { event: event.event, at, error_code: event.failure.code, error_message: event.failure.message, error_reason: event.failure.reason };
}

/** A message with its timeline and the delivery reports sent for it. */
export function presentMessageHistory(history: MessageHistory): Static<typeof MessageHistorySchema> {
  return {
    message: presentMessage(history.message),
    timeline: history.timeline.map(presentTimelineEvent),
    reports: history.reports.map(presentConsoleDeliveryDetail),
  };
}

/** What a CSV upload would send, row by row, and what it would cost. */
export function presentCsvPreview(preview: CsvPreview): Static<typeof CsvPreviewSchema> {
  return {
    template_id: preview.templateId,
    columns: preview.columns,
    rows: preview.rows.map((row) => ({ row: row.row, phone: row.phone, template_data: row.templateData, tracking_id: row.trackingId, problem: row.problem })),
    valid_rows: preview.validRows,
    invalid_rows: preview.invalidRows,
    unit_price: preview.unitPrice,
    total_cost: preview.totalCost,
    balance: preview.balance,
    quota: presentQuotaView(preview.quota),
  };
}
