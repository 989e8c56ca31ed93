/**
 * CSV as spreadsheets export it (RFC 4180): comma separated, fields optionally in double quotes,
 * `""` for a quote inside one, quoted fields may span lines, CRLF or LF, an optional UTF-8 BOM.
 */

export interface CsvRecord {
  /** Line of the file where the record starts (1-based), for messages people can act on. */
  line: number;
  fields: string[];
}

export class CsvError extends Error {
  override readonly name = 'CsvError';
}

export function parseCsv(text: string): CsvRecord[] {
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let fieldWasQuoted = false;
  let line = 1;
  let recordLine = 1;

  const endField = () => {
    fields.push(field);
    field = '';
    fieldWasQuoted = false;
  };
  const endRecord = () => {
    // A blank line (one empty, unquoted field) is not a record.
    const blank = fields.length === 0 && field === '' && !fieldWasQuoted;
    endField();
    if (!blank) records.push({ line: recordLine, fields });
    fields = [];
  };

  for (let i = 0; i < input.length; i += 1) {
    const char = input[i]!;
    if (quoted) {
      if (char === '"') {
        if (input[i + 1] === '"') {
          field += '"';
          i += 1;
        } else {
          quoted = false;
        }
      } else {
        if (char === '\n') line += 1;
        field += char;
      }
      continue;
    }
    if (char === '"') {
      if (field !== '') throw new CsvError(`line ${line}: a quote inside an unquoted field (quote the whole field and double the quote)`);
      quoted = true;
      fieldWasQuoted = true;
    } else if (char === ',') {
      endField();
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[i + 1] === '\n') i += 1;
      endRecord();
      line += 1;
      recordLine = line;
    } else {
      field += char;
    }
  }
  if (quoted) throw new CsvError(`line ${recordLine}: a quoted field is not closed`);
  if (field !== '' || fields.length > 0 || fieldWasQuoted) endRecord();
  return records;
}
