/**
 * Sending the valid rows of a previewed CSV file: chunks of at most min(500, today's remaining
 * quota) through /messages/batch, each with its own Idempotency-Key. Rows beyond today's quota are
 * not sent and are reported as over today's quota (as the SDK's sendLarge does), and a
 * daily_quota_exceeded answer closes the day for the rows after it. The result is one line per row.
 */
import { api, newIdempotencyKey, type ConsoleApiError } from './api.ts';
import type { BatchResponse, CsvPreviewRow, SendMode } from './api-types.ts';
import { toApiError } from './use-api.ts';

export const MAX_BATCH = 500;
/** A chunk whose answer was lost (network, 5xx) is sent again with the same key: the server answers it once. */
const RETRIES_PER_CHUNK = 2;

export type RowStatus = 'queued' | 'scheduled' | 'error' | 'invalid' | 'over_quota' | 'not_sent';

export interface RowResult {
  row: number;
  phone: string;
  tracking_id: string | null;
  status: RowStatus;
  msg_id: string | null;
  error: string | null;
}

export interface CsvSendOptions {
  templateId: string;
  rows: CsvPreviewRow[];
  /** Today's remaining quota of the template's sender account. */
  remaining: number;
  mode?: SendMode;
  apiKeyId?: string;
  onProgress(done: number, total: number): void;
}

export function chunkSize(remaining: number): number {
  return Math.max(0, Math.min(MAX_BATCH, remaining));
}

function unknownOutcome(error: ConsoleApiError): boolean {
  return error.status === 0 || error.status >= 500;
}

async function sendChunk(body: unknown, idempotencyKey: string): Promise<BatchResponse> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await api.post<BatchResponse>('/messages/batch', body, { idempotencyKey });
    } catch (caught) {
      const error = toApiError(caught);
      if (!unknownOutcome(error) || attempt >= RETRIES_PER_CHUNK) throw error;
    }
  }
}

export async function sendCsvRows(options: CsvSendOptions): Promise<RowResult[]> {
  const results = new Map<number, RowResult>();
  const base = (row: CsvPreviewRow) => ({ row: row.row, phone: row.phone, tracking_id: row.tracking_id });
  const valid: CsvPreviewRow[] = [];
  for (const row of options.rows) {
    if (row.problem !== null) results.set(row.row, { ...base(row), status: 'invalid', msg_id: null, error: row.problem });
    else valid.push(row);
  }
  const sendable = valid.slice(0, Math.max(0, options.remaining));
  const overQuota = valid.slice(sendable.length);
  const size = Math.max(1, chunkSize(options.remaining));
  let done = 0;
  let stopped: { status: RowStatus; error: string } | null = null;
  options.onProgress(0, sendable.length);

  for (let start = 0; start < sendable.length; start += size) {
    const chunk = sendable.slice(start, start + size);
    if (stopped !== null) {
      for (const row of chunk) results.set(row.row, { ...base(row), status: stopped.status, msg_id: null, error: stopped.error });
      continue;
    }
    const body = {
      template_id: options.templateId,
      recipients: chunk.map((row) => ({
        phone: row.phone,
        template_data: row.template_data,
        ...(row.tracking_id !== null ? { tracking_id: row.tracking_id } : {}),
      })),
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
      ...(options.apiKeyId !== undefined ? { api_key_id: options.apiKeyId } : {}),
    };
    try {
      const response = await sendChunk(body, newIdempotencyKey());
      chunk.forEach((row, position) => {
        const item = response.results[position];
        if (item?.status === 'queued' && item.msg_id !== undefined) {
          const status = response.scheduled_at === null ? 'queued' : 'scheduled';
          results.set(row.row, { ...base(row), status, msg_id: item.msg_id, error: null });
        } else if (item?.error?.startsWith('daily_quota_exceeded')) {
          results.set(row.row, { ...base(row), status: 'over_quota', msg_id: null, error: item.error });
          stopped = { status: 'over_quota', error: item.error };
        } else {
          results.set(row.row, { ...base(row), status: 'error', msg_id: null, error: item?.error ?? 'no result for this row' });
        }
      });
    } catch (caught) {
      const error = toApiError(caught);
      const text = `${error.type}: ${error.message}`;
      for (const row of chunk) results.set(row.row, { ...base(row), status: 'error', msg_id: null, error: text });
      // A request the server refused as malformed concerns this chunk only; anything else (wallet, session) stops the run.
      if (error.status !== 400) stopped = { status: 'not_sent', error: `not sent: stopped after ${text}` };
    }
    done += chunk.length;
    options.onProgress(done, sendable.length);
  }
  for (const row of overQuota) {
    results.set(row.row, { ...base(row), status: 'over_quota', msg_id: null, error: "daily_quota_exceeded: beyond today's remaining quota" });
  }
  return options.rows.map((row) => results.get(row.row)!).filter((result) => result !== undefined);
}

/**
 * A spreadsheet runs a cell that starts with = + - @ as a formula, and uploaded lists often come
 * from third parties: such a cell gets a leading apostrophe, except a plain number (+84…, -118).
 */
function spreadsheetSafe(text: string): string {
  const formula = /^[=@\t\r]/.test(text) || (/^[+-]/.test(text) && !/^[+-][\d\s().-]*$/.test(text));
  return formula ? `'${text}` : text;
}

function csvField(value: string | number | null): string {
  const text = spreadsheetSafe(value === null ? '' : String(value));
  return /[",\r\n;]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The per-row result as CSV (with a BOM, so Excel reads it as UTF-8). */
export function resultsCsv(results: RowResult[]): string {
  const lines = [['row', 'phone', 'tracking_id', 'status', 'msg_id', 'error'].join(',')];
  for (const result of results) {
    lines.push([result.row, result.phone, result.tracking_id, result.status, result.msg_id, result.error].map(csvField).join(','));
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

