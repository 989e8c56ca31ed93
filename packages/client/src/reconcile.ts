/**
 * reconcile: the contract's way of finding failures. The webhook reports deliveries only; a
 * message that failed (bad number, daily cap, platform refusal) is found by listing
 * `status=failed` with `from`. A job that must account for every message runs this on
 * a schedule and books each failed one (refunded by the service, per docs/api.md).
 *
 * `from` bounds the messages' creation time, not the time they failed: pass the creation time of
 * the oldest message you still have to account for (for example the start of a campaign), not the
 * time of your last run, or a message created earlier that failed since would be missed.
 */
import type { Client } from './client.ts';
import type { CallOptions } from './transport.ts';
import type { DateTimeString, ListMessagesQuery, MessageRecord } from './types.ts';

export interface ReconcileOptions extends Pick<CallOptions, 'signal' | 'timeoutMs' | 'maxRetries'> {
  /** Lower bound on created_at (inclusive). */
  from: DateTimeString | Date;
  /**
   * Upper bound on created_at. Default: the moment the walk starts, so the walk covers a fixed
   * window and paging is stable while new messages arrive.
   */
  to?: DateTimeString | Date;
  /** Narrow to one template or sender account. */
  templateId?: string;
  oaId?: string;
  /** Called for each failed message as it is found (streaming; the report still lists them all). */
  onFailed?: (message: MessageRecord) => void | Promise<void>;
}

export interface ReconcileReport {
  from: string;
  to: string;
  /** Failed messages created in the window, newest first. */
  failed: MessageRecord[];
  /** failed.length, counted per platform error code (`error_code`, "null" when none). */
  byErrorCode: Record<string, number>;
}

function iso(value: DateTimeString | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}

export async function reconcile(client: Client, options: ReconcileOptions): Promise<ReconcileReport> {
  const { from, to: _to, onFailed, templateId, oaId, ...callOptions } = options;
  const to = iso(options.to ?? new Date());
  const query: ListMessagesQuery = { status: 'failed', from: iso(from), to };
  if (templateId !== undefined) query.template_id = templateId;
  if (oaId !== undefined) query.oa_id = oaId;
  const failed: MessageRecord[] = [];
  const byErrorCode: Record<string, number> = {};
  for await (const message of client.messages.iterate(query, callOptions)) {
    failed.push(message);
    const code = String(message.error_code);
    byErrorCode[code] = (byErrorCode[code] ?? 0) + 1;
    await onFailed?.(message);
  }
  return { from: iso(from), to, failed, byErrorCode };
}
