/**
 * CSV as spreadsheets write it (RFC 4180): fields separated by `,` or, as Excel does under a
 * Vietnamese locale, by `;`; a field in double quotes may hold separators, line breaks and doubled
 * quotes; lines end in CRLF or LF; UTF-8 files may start with a byte order mark. Reading and writing.
 */

export type CsvSeparator = ',' | ';';

export interface ParsedCsv {
  separator: CsvSeparator;
  /** Every record, the header first. A record with no characters at all (an empty line) is kept as `['']`. */
  records: string[][];
}

export type CsvParseResult = { kind: 'parsed'; csv: ParsedCsv } | { kind: 'unterminated_quote'; record: number } | { kind: 'too_many_records'; limit: number };

const BYTE_ORDER_MARK = '\uFEFF';
const QUOTE = 34;
const COMMA = 44;
const SEMICOLON = 59;
const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;

/**
 * The separator of the header line: whichever of `;` and `,` it has more of outside quotes (a
 * comma when neither appears, as in a file of one column).
 */
export function detectSeparator(text: string): CsvSeparator {
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) quoted = !quoted;
    else if (quoted) continue;
    else if (code === LINE_FEED || code === CARRIAGE_RETURN) break;
    else if (code === COMMA) commas += 1;
    else if (code === SEMICOLON) semicolons += 1;
  }
  return semicolons > commas ? ';' : ',';
}

/**
 * Parses CSV text into records. Lenient where spreadsheets are: a quote inside an unquoted field,
 * or text after a closing quote, is kept as written. The one fatal mistake is a quoted field that
 * never closes (it would swallow the rest of the file). At most `maxRecords` records (header
 * included) are read; a final line break does not start a record.
 */
export function parseCsv(input: string, options: { maxRecords?: number } = {}): CsvParseResult {
  const text = input.startsWith(BYTE_ORDER_MARK) ? input.slice(1) : input;
  const separator = detectSeparator(text);
  const separatorCode = separator.charCodeAt(0);
  const maxRecords = options.maxRecords ?? Number.POSITIVE_INFINITY;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let index = 0;
  const length = text.length;
  const endRecord = (): boolean => {
    record.push(field);
    field = '';
    records.push(record);
    record = [];
    return records.length <= maxRecords;
  };
  while (index < length) {
    let code = text.charCodeAt(index);
    if (code === QUOTE && field === '') {
      // A quoted field: runs to the quote not followed by another quote.
      let start = index + 1;
      for (;;) {
        const close = text.indexOf('"', start);
        if (close === -1) return { kind: 'unterminated_quote', record: records.length + 1 };
        field += text.slice(start, close);
        if (text.charCodeAt(close + 1) === QUOTE) {
          field += '"';
          start = close + 2;
          continue;
        }
        index = close + 1;
        break;
      }
      if (index >= length) break;
      code = text.charCodeAt(index);
    }
    if (code === separatorCode) {
      record.push(field);
      field = '';
      index += 1;
    } else if (code === LINE_FEED || code === CARRIAGE_RETURN) {
      if (!endRecord()) return { kind: 'too_many_records', limit: maxRecords };
      index += code === CARRIAGE_RETURN && text.charCodeAt(index + 1) === LINE_FEED ? 2 : 1;
    } else {
      // Plain text up to the next separator, line break or quote.
      let end = index + 1;
      while (end < length) {
        const next = text.charCodeAt(end);
        if (next === separatorCode || next === LINE_FEED || next === CARRIAGE_RETURN || next === QUOTE) break;
        end += 1;
      }
      // A quote that does not open a field is an ordinary character.
      if (end < length && text.charCodeAt(end) === QUOTE) end += 1;
      field += text.slice(index, end);
      index = end;
    }
  }
  // The last record, unless the text ended with its line break.
  const lastCode = text.charCodeAt(length - 1);
  const endedWithLineBreak = length > 0 && (lastCode === LINE_FEED || lastCode === CARRIAGE_RETURN) && record.length === 0 && field === '';
  if (length > 0 && !endedWithLineBreak && !endRecord()) return { kind: 'too_many_records', limit: maxRecords };
  return { kind: 'parsed', csv: { separator, records } };
}

/** True for a record that is an empty line (or only separators): spreadsheets leave these at the end. */
export function isBlankRecord(record: readonly string[]): boolean {
  return record.every((field) => field.trim() === '');
}

/** One field as RFC 4180 writes it: quoted when it holds a separator, a quote or a line break. */
export function formatCsvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",;\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, comma-separated, with its CRLF line end. */
export function formatCsvLine(row: readonly (string | number | null)[]): string {
  return `${row.map(formatCsvField).join(',')}\r\n`;
}

/** Starts a CSV document: Excel reads a file as UTF-8 only when it begins with a byte order mark. */
export const CSV_BYTE_ORDER_MARK = BYTE_ORDER_MARK;

/** A CSV document with a byte order mark (so Excel reads it as UTF-8) and CRLF line ends. */
export function formatCsv(rows: readonly (readonly (string | number | null)[])[]): string {
  return `${CSV_BYTE_ORDER_MARK}${rows.map(formatCsvLine).join('')}`;
}
