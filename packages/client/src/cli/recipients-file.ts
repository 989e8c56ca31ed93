/**
 * The batch file: a header `phone,tracking_id,<param>,<param>…` and one recipient per row, checked
 * against the template's params before anything is sent (docs/api.md: required params present,
 * every value within min_length..max_length, no unknown keys), so a typo in row 9,000 does not
 * leave a half-sent campaign behind.
 */
import type { BatchRecipient, Template, TemplateData } from '../types.ts';
import { parseCsv, type CsvRecord } from './csv.ts';

const TRACKING_ID = /^[A-Za-z0-9._-]{1,48}$/;

export interface RecipientRow {
  /** Line of the file where the row starts. */
  line: number;
  recipient: BatchRecipient;
}

export interface RecipientsFile {
  rows: RecipientRow[];
  /** Problems found, each naming its line; nothing may be sent while there are any. */
  problems: string[];
}

/** Length in characters as people count them (code points, so an emoji is one). */
function characters(value: string): number {
  return [...value].length;
}

function headerProblems(header: string[], template: Template): string[] {
  const problems: string[] = [];
  if (header[0] !== 'phone' || header[1] !== 'tracking_id') {
    problems.push(`line 1: the header must start with phone,tracking_id (then the template's params), found ${header.slice(0, 2).join(',')}`);
  }
  const params = new Set(template.params.map((param) => param.name));
  const columns = header.slice(2);
  for (const column of columns) if (!params.has(column)) problems.push(`line 1: column "${column}" is not a param of template ${template.template_id} (params: ${[...params].join(', ') || 'none'})`);
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column)) problems.push(`line 1: column "${column}" appears twice`);
    seen.add(column);
  }
  for (const param of template.params) if (param.required && !columns.includes(param.name)) problems.push(`line 1: required param "${param.name}" has no column`);
  return problems;
}

function rowOf(record: CsvRecord, columns: string[], template: Template, problems: string[]): RecipientRow {
  const [phone = '', trackingId = '', ...values] = record.fields.map((field) => field.trim());
  const at = `line ${record.line}`;
  if (record.fields.length !== columns.length + 2) problems.push(`${at}: ${record.fields.length} fields, the header has ${columns.length + 2}`);
  if (phone === '') problems.push(`${at}: phone is empty`);
  if (trackingId !== '' && !TRACKING_ID.test(trackingId)) problems.push(`${at}: tracking_id "${trackingId}" must be at most 48 letters, digits, dots, hyphens or underscores`);
  const data: TemplateData = {};
  columns.forEach((name, position) => {
    const value = values[position] ?? '';
    const param = template.params.find((candidate) => candidate.name === name);
    if (!param) return;
    if (value === '') {
      if (param.required) problems.push(`${at}: ${name} is required`);
      return;
    }
    const length = characters(value);
    if (length < param.min_length || length > param.max_length) {
      problems.push(`${at}: ${name} has ${length} characters, the template allows ${param.min_length} to ${param.max_length}`);
    }
    data[name] = value;
  });
  const recipient: BatchRecipient = { phone, template_data: data };
  if (trackingId !== '') recipient.tracking_id = trackingId;
  return { line: record.line, recipient };
}

export function readRecipientsFile(text: string, template: Template): RecipientsFile {
  const records = parseCsv(text);
  const [header, ...body] = records;
  if (!header) return { rows: [], problems: ['the file is empty (expected a header phone,tracking_id,<params…>)'] };
  const columns = header.fields.map((field) => field.trim());
  const problems = headerProblems(columns, template);
  if (problems.length > 0) return { rows: [], problems };
  const rows = body.map((record) => rowOf(record, columns.slice(2), template, problems));
  if (rows.length === 0) problems.push('the file has a header but no recipients');
  return { rows, problems };
}
