/**
 * The console's CSV upload, checked before anything is sent: each row read with the rules a send
 * applies (phone normalised, template_data against the template's params), the cost, the wallet
 * and the sender account's quota today. Nothing is written.
 */
import { isBlankRecord, parseCsv } from '../../lib/csv.ts';
import { normalizePhone } from '../../lib/phone.ts';
import type { TemplateRow } from '../../store/schema.ts';
import { findWorkspace } from '../../store/workspaces.ts';
import { readQuota, type QuotaToday } from '../catalog.ts';
import type { ConsoleUserCaller, Context, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { findTemplateDataProblem, parseTemplateParams, type TemplateParam } from '../template-data.ts';

export const MAX_CSV_BYTES = 5 * 1024 * 1024;
export const MAX_CSV_ROWS = 100_000;

const PHONE_COLUMN = 'phone';
const TRACKING_ID_COLUMN = 'tracking_id';
/** The tracking_id rule of the send schemas (http/schemas.ts TrackingId). */
const TRACKING_ID_PATTERN = /^[A-Za-z0-9._-]{1,48}$/;
/** A normalised number is 84 and digits; E.164 allows at most 15 digits, and no real number has fewer than 9. */
const PHONE_PATTERN = /^\d{9,15}$/;

export interface CsvPreviewRow {
  /** 1-based number of the data row (the header is not counted). */
  row: number;
  /** Normalised when it is a number, else as written. */
  phone: string;
  templateData: Record<string, string>;
  trackingId: string | null;
  /** Why this row would not be sent, or null. */
  problem: string | null;
}

export interface CsvPreview {
  templateId: string;
  columns: string[];
  rows: CsvPreviewRow[];
  validRows: number;
  invalidRows: number;
  unitPrice: number;
  totalCost: number;
  balance: number;
  quota: QuotaToday;
}

/** Where each column's value goes, decided from the header. */
interface ColumnPlan {
  columns: string[];
  phoneIndex: number;
  trackingIdIndex: number | null;
  params: { param: TemplateParam; index: number }[];
}

function planColumns(header: readonly string[], params: readonly TemplateParam[]): ColumnPlan {
  const columns = header.map((name) => name.trim());
  const paramNames = new Set(params.map((param) => param.name));
  const known = (name: string) => name === PHONE_COLUMN || name === TRACKING_ID_COLUMN || paramNames.has(name);
  const unknown = columns.filter((name) => !known(name));
  const expected = [PHONE_COLUMN, ...paramNames, `${TRACKING_ID_COLUMN} (optional)`].join(', ');
  if (unknown.length > 0) {
    throw badRequest(`unknown CSV column${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')}; this template takes ${expected}`);
  }
  const repeated = columns.filter((name, index) => columns.indexOf(name) !== index);
  if (repeated.length > 0) throw badRequest(`CSV column "${repeated[0]}" appears more than once`);
  const missing = [PHONE_COLUMN, ...params.filter((param) => param.required).map((param) => param.name)].filter((name) => !columns.includes(name));
  if (missing.length > 0) {
    throw badRequest(`missing CSV column${missing.length > 1 ? 's' : ''} ${missing.map((name) => `"${name}"`).join(', ')}; this template takes ${expected}`);
  }
  const trackingIdIndex = columns.indexOf(TRACKING_ID_COLUMN);
  return {
    columns,
    phoneIndex: columns.indexOf(PHONE_COLUMN),
    trackingIdIndex: trackingIdIndex === -1 ? null : trackingIdIndex,
    params: params.flatMap((param) => (columns.includes(param.name) ? [{ param, index: columns.indexOf(param.name) }] : [])),
  };
}

function previewRow(plan: ColumnPlan, record: readonly string[], row: number, params: TemplateParam[]): CsvPreviewRow {
  const rawPhone = (record[plan.phoneIndex] ?? '').trim();
  const normalized = normalizePhone(rawPhone);
  const phone = PHONE_PATTERN.test(normalized) ? normalized : rawPhone;
  const templateData: Record<string, string> = {};
  for (const { param, index } of plan.params) {
    const value = record[index] ?? '';
    // An empty cell is a parameter not given: fine when optional, "missing" when required.
    if (value !== '') templateData[param.name] = value;
  }
  const trackingText = plan.trackingIdIndex === null ? '' : (record[plan.trackingIdIndex] ?? '').trim();
  const trackingId = trackingText === '' ? null : trackingText;
  const problem = rowProblem({ record, columnCount: plan.columns.length, normalized, templateData, trackingId, params });
  return { row, phone, templateData, trackingId, problem };
}

function rowProblem(input: {
  record: readonly string[];
  columnCount: number;
  normalized: string;
  templateData: Record<string, string>;
  trackingId: string | null;
  params: TemplateParam[];
}): string | null {
  if (input.record.length !== input.columnCount) return `the row has ${input.record.length} fields but the header has ${input.columnCount}`;
  if (input.normalized === '') return 'missing_phone: the phone is empty';
  if (!PHONE_PATTERN.test(input.normalized)) return `invalid phone "${input.normalized}": a phone number has 9 to 15 digits`;
  const dataProblem = findTemplateDataProblem(input.params, input.templateData);
  if (dataProblem) return `invalid_template_data: ${dataProblem}`;
  if (input.trackingId !== null && !TRACKING_ID_PATTERN.test(input.trackingId)) {
    return 'invalid_tracking_id: at most 48 letters, digits, dots, hyphens or underscores';
  }
  return null;
}

async function enabledTemplate(ctx: Context<ConsoleUserCaller>, templateId: string): Promise<TemplateRow> {
  const template = await ctx.parts.catalog.template(ctx.caller.workspaceId, templateId);
  if (!template) throw new ApiError('template_not_found', `template ${templateId} not found`);
  if (template.status !== 'ENABLE') throw new ApiError('template_not_enabled', `template ${templateId} is ${template.status}; only ENABLE templates can be sent`);
  return template;
}

function parseRecords(csv: string): string[][] {
  if (Buffer.byteLength(csv, 'utf8') > MAX_CSV_BYTES) throw badRequest(`the CSV file is larger than ${MAX_CSV_BYTES / 1024 / 1024} MB; split it`);
  const parsed = parseCsv(csv, { maxRecords: MAX_CSV_ROWS + 1 });
  if (parsed.kind === 'unterminated_quote') throw badRequest(`${parsed.record === 1 ? 'the CSV header' : `CSV row ${parsed.record - 1}`}: a quoted field never closes`);
  if (parsed.kind === 'too_many_records') throw badRequest(`the CSV file has more than ${MAX_CSV_ROWS} rows; split it`);
  const records = parsed.csv.records;
  if (records.length === 0 || isBlankRecord(records[0]!)) throw badRequest(`the CSV file needs a header row: ${PHONE_COLUMN}, one column per template parameter, optionally ${TRACKING_ID_COLUMN}`);
  return records;
}

/** POST /console/api/messages/csv-preview. */
export async function previewCsvUpload({ ctx, input }: VerbCall<ConsoleUserCaller, { template_id: string; csv: string }>): Promise<CsvPreview> {
  const template = await enabledTemplate(ctx, input.template_id);
  const params = parseTemplateParams(template.params);
  const records = parseRecords(input.csv);
  const plan = planColumns(records[0]!, params);
  const rows: CsvPreviewRow[] = [];
  for (let index = 1; index < records.length; index += 1) {
    const record = records[index]!;
    // Blank lines (spreadsheets leave them at the end) are not recipients.
    if (!isBlankRecord(record)) rows.push(previewRow(plan, record, index, params));
  }
  const validRows = rows.filter((row) => row.problem === null).length;
  const workspace = await findWorkspace(ctx.store.db, ctx.caller.workspaceId);
  if (!workspace) throw new ApiError('workspace_not_found', `workspace ${ctx.caller.workspaceId} not found`);
  const [quota] = await readQuota({ ctx, input: { oa_id: template.oa_id } });
  if (!quota) throw new ApiError('sender_account_not_found', `sender account ${template.oa_id} not found`);
  return {
    templateId: template.template_id,
    columns: plan.columns,
    rows,
    validRows,
    invalidRows: rows.length - validRows,
    unitPrice: template.price,
    totalCost: validRows * template.price,
    balance: workspace.balance,
    quota,
  };
}
