import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectSeparator, formatCsv, formatCsvField, isBlankRecord, parseCsv, type CsvParseResult } from './csv.ts';

function recordsOf(result: CsvParseResult): string[][] {
  if (result.kind !== 'parsed') throw new Error(`expected parsed CSV, got ${result.kind}`);
  return result.csv.records;
}

describe('detectSeparator', () => {
  it('takes the semicolon Excel writes under a Vietnamese locale', () => {
    expect(detectSeparator('phone;name;code\r\n0912345678;An;A1')).toBe(';');
  });

  it('takes the comma otherwise, and when the header has neither', () => {
    expect(detectSeparator('phone,name,code')).toBe(',');
    expect(detectSeparator('phone')).toBe(',');
  });

  it('looks at the header line only, outside quotes', () => {
    expect(detectSeparator('"a;b;c",d\nx;y;z;w;v')).toBe(',');
  });
});

describe('parseCsv', () => {
  it('reads comma-separated records with CRLF line ends', () => {
    expect(recordsOf(parseCsv('phone,name\r\n0912345678,An\r\n0987654321,Bình\r\n'))).toEqual([
      ['phone', 'name'],
      ['0912345678', 'An'],
      ['0987654321', 'Bình'],
    ]);
  });

  it('reads semicolon-separated records with LF line ends and no final line break', () => {
    const result = parseCsv('phone;name\n0912345678;An, Bình');
    expect(recordsOf(result)).toEqual([
      ['phone', 'name'],
      ['0912345678', 'An, Bình'],
    ]);
    expect(result.kind === 'parsed' && result.csv.separator).toBe(';');
  });

  it('drops the UTF-8 byte order mark so the first column name is exact', () => {
    expect(recordsOf(parseCsv('\uFEFFphone,name\n1,2'))[0]).toEqual(['phone', 'name']);
  });

  it('reads quoted fields with separators, doubled quotes and line breaks inside', () => {
    const text = 'phone,name,note\r\n"0912345678","Nguyễn, Văn ""A""","line one\r\nline two"\r\n';
    expect(recordsOf(parseCsv(text))).toEqual([
      ['phone', 'name', 'note'],
      ['0912345678', 'Nguyễn, Văn "A"', 'line one\r\nline two'],
    ]);
  });

  it('keeps empty fields, at the end of a record too', () => {
    expect(recordsOf(parseCsv('a,b,c\n1,,\n,"",3'))).toEqual([
      ['a', 'b', 'c'],
      ['1', '', ''],
      ['', '', '3'],
    ]);
  });

  it('keeps an empty line as a record of one empty field', () => {
    const records = recordsOf(parseCsv('a,b\n\n1,2\n'));
    expect(records).toEqual([['a', 'b'], [''], ['1', '2']]);
    expect(isBlankRecord(records[1]!)).toBe(true);
    expect(isBlankRecord(['', ' '])).toBe(true);
    expect(isBlankRecord(['', 'x'])).toBe(false);
  });

  it('keeps a stray quote inside an unquoted field as text', () => {
    expect(recordsOf(parseCsv('a,b\n5" screen,x'))).toEqual([
      ['a', 'b'],
      ['5" screen', 'x'],
    ]);
  });

  it('reads a lone CR as a line end (old Mac files)', () => {
    expect(recordsOf(parseCsv('a,b\r1,2\r'))).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('refuses a quoted field that never closes, naming its record', () => {
    expect(parseCsv('a,b\n1,2\n3,"never closed\n4,5')).toEqual({ kind: 'unterminated_quote', record: 3 });
  });

  it('stops at maxRecords instead of reading a huge file whole', () => {
    expect(parseCsv('h\n1\n2\n3\n', { maxRecords: 3 })).toEqual({ kind: 'too_many_records', limit: 3 });
    expect(recordsOf(parseCsv('h\n1\n2\n', { maxRecords: 3 }))).toHaveLength(3);
  });

  it('reads an empty text as no records', () => {
    expect(recordsOf(parseCsv(''))).toEqual([]);
    expect(recordsOf(parseCsv('\uFEFF'))).toEqual([]);
  });
});

describe('formatCsv', () => {
  it('quotes only fields that need it, doubling their quotes', () => {
    expect(formatCsvField('plain')).toBe('plain');
    expect(formatCsvField('a,b')).toBe('"a,b"');
    expect(formatCsvField('a;b')).toBe('"a;b"');
    expect(formatCsvField('say "hi"')).toBe('"say ""hi"""');
    expect(formatCsvField('two\nlines')).toBe('"two\nlines"');
    expect(formatCsvField(null)).toBe('');
    expect(formatCsvField(-300)).toBe('-300');
  });

  it('writes a BOM and CRLF line ends, and parses back to the same fields', () => {
    const rows = [
      ['created_at', 'note'],
      ['2026-11-24 10:00:00', 'Nạp tiền, "tháng 11"\nlần 2'],
    ];
    const text = formatCsv(rows);
    expect(text.startsWith('\uFEFFcreated_at,note\r\n')).toBe(true);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(recordsOf(parseCsv(text))).toEqual(rows);
  });
});

describe('formatCsv then parseCsv', () => {
  it('gives back any fields, whatever characters they hold', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'ă', ',', ';', '"', '\r', '\n', ' ', '=') });
    const rows = fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(rows, (written) => {
        expect(recordsOf(parseCsv(formatCsv(written)))).toEqual(written);
      }),
    );
  });
});
