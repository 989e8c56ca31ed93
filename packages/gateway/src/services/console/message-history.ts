/** One message as the console's message page shows it: the record, what happened to it, and its delivery report. */
import type { MessageRow } from '../../store/schema.ts';
import type { ConsoleUserCaller, VerbCall } from '../context.ts';
import { getMessage } from '../messages.ts';
import { listMessageReports, type DeliveryDetail } from './webhook-deliveries.ts';

export type TimelineEventName = 'created' | 'scheduled' | 'sent' | 'delivered' | 'failed';

export interface TimelineEvent {
  event: TimelineEventName;
  at: number;
  /** Only on `failed`: the platform's code (or the gateway's negative one), the English message and the Vietnamese reason. */
  failure?: { code: number | null; message: string | null; reason: string | null };
}

export interface MessageHistory {
  message: MessageRow;
  timeline: TimelineEvent[];
  /** The delivery reports sent for it (none, or one), with the headers they are signed with. */
  reports: DeliveryDetail[];
}

/** The events a message's record shows, in the order they happened (scheduled right after created). */
export function timelineOf(message: MessageRow): TimelineEvent[] {
  const events: TimelineEvent[] = [{ event: 'created', at: message.created_at }];
  if (message.scheduled_at !== null) events.push({ event: 'scheduled', at: message.scheduled_at });
  if (message.sent_at !== null) events.push({ event: 'sent', at: message.sent_at });
  if (message.delivered_at !== null) events.push({ event: 'delivered', at: message.delivered_at });
  if (message.failed_at !== null) {
    events.push({ event: 'failed', at: message.failed_at, failure: { code: message.error_code, message: message.error_message, reason: message.error_reason } });
  }
  return events;
}

/** GET /console/api/messages/{id}: another workspace's message is not found, as on /api/v1. */
export async function getMessageHistory({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string }>): Promise<MessageHistory> {
  const message = await getMessage({ ctx, input });
  return { message, timeline: timelineOf(message), reports: await listMessageReports({ ctx, input: { messageId: message.id } }) };
}
