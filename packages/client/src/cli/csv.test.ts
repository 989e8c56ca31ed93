import { describe, expect, it } from 'vitest';
import { CsvError, parseCsv } from './csv.ts';

describe('parseCsv', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF, a BOM, and skips blank lines', () => {
    const text = '\uFEFFphone,tracking_id,name\r\n0912,t-1,"Nguyen, Van ""An"""\r\n\r\n0913,,"two\nlines"\n0914,t-3,\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ['phone', 'tracking_id', 'name'] },
      { line: 2, fields: ['0912', 't-1', 'Nguyen, Van "An"'] },
      { line: 4, fields: ['0913', '', 'two\nlines'] },
      { line: 6, fields: ['0914', 't-3', ''] },
    ]);
  });

  it('keeps a last record without a newline, and an empty quoted field', () => {
    expect(parseCsv('a,b\n"",x')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['', 'x'] },
    ]);
  });

  it('names the line of an unclosed quote or a stray one', () => {
    expect(() => parseCsv('a,b\n1,"open\n2,3')).toThrow(new CsvError('line 2: a quoted field is not closed'));
    expect(() => parseCsv('a,b\n1,x"y')).toThrow(/line 2: a quote inside an unquoted field/);
  });
});
