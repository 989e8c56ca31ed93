import { describe, expect, it } from 'vitest';
import { formatUtc, formatVietnamTime, nextVietnamMidnight, parseDateTime, vietnamDay } from './vietnam-time.ts';

describe('parseDateTime', () => {
  it('reads offsets', () => {
    expect(parseDateTime('2026-11-21T08:00:00Z')).toBe(Date.UTC(2026, 10, 21, 8));
    expect(parseDateTime('2026-11-21T15:00:00+07:00')).toBe(Date.UTC(2026, 10, 21, 8));
    expect(parseDateTime('2026-11-21T03:00:00.250-05:00')).toBe(Date.UTC(2026, 10, 21, 8, 0, 0, 250));
  });

  it('reads a value without an offset as Vietnam time', () => {
    expect(parseDateTime('2026-11-21T15:00:00')).toBe(Date.UTC(2026, 10, 21, 8));
    expect(parseDateTime('2026-11-21 15:00')).toBe(Date.UTC(2026, 10, 21, 8));
  });

  it.each(['tomorrow', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-11-21T25:00:00Z', '', '2026-11-21'])('rejects %j', (text) => {
    expect(parseDateTime(text)).toBeNull();
  });

  it.each(['2026-11-21T15:00:00+99:99', '2026-11-21T15:00:00+24:00', '2026-11-21T15:00:00-07:60', '2026-11-21T15:00:00+0760'])('rejects the impossible offset of %j', (text) => {
    expect(parseDateTime(text)).toBeNull();
  });

  it('takes the widest real offsets', () => {
    expect(parseDateTime('2026-11-21T23:59:00+23:59')).toBe(Date.UTC(2026, 10, 21, 0, 0));
    expect(parseDateTime('2026-11-21T00:00:00-23:59')).toBe(Date.UTC(2026, 10, 21, 23, 59));
  });

  it.each(['0000-01-01T00:00:00Z', '0050-06-01T12:00:00Z', '0099-12-31T23:59:59Z', '0026-11-21T15:00:00', '1969-12-31T23:59:59Z'])(
    'rejects %j, a year before 1970 (never read as 19xx)',
    (text) => {
      expect(parseDateTime(text)).toBeNull();
    },
  );

  it('reads years from 1970 to 9999 as written', () => {
    expect(parseDateTime('1970-01-01T00:00:00Z')).toBe(0);
    expect(parseDateTime('9999-12-31T23:59:59Z')).toBe(Date.UTC(9999, 11, 31, 23, 59, 59));
  });
});

describe('Vietnam days', () => {
  it('a UTC evening is already the next day in Vietnam', () => {
    expect(vietnamDay(Date.UTC(2026, 10, 21, 16, 59))).toBe('2026-11-21');
    expect(vietnamDay(Date.UTC(2026, 10, 21, 17, 0))).toBe('2026-11-22');
  });

  it('names the right day for instants asked in any order around midnight', () => {
    const midnight = Date.UTC(2026, 10, 21, 17, 0);
    const asked = [midnight - 1, midnight, midnight - 1, midnight + 86_400_000 - 1, midnight + 86_400_000, midnight - 86_400_000 - 1, midnight + 1];
    expect(asked.map(vietnamDay)).toEqual(['2026-11-21', '2026-11-22', '2026-11-21', '2026-11-22', '2026-11-23', '2026-11-20', '2026-11-22']);
  });

  it('quota resets at the next Vietnam midnight, written with +07:00', () => {
    const now = Date.UTC(2026, 10, 21, 9, 30);
    expect(formatVietnamTime(nextVietnamMidnight(now))).toBe('2026-11-22T00:00:00.000+07:00');
    expect(formatUtc(nextVietnamMidnight(now))).toBe('2026-11-21T17:00:00.000Z');
  });
});
