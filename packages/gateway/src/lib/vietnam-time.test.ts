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
});

describe('Vietnam days', () => {
  it('a UTC evening is already the next day in Vietnam', () => {
    expect(vietnamDay(Date.UTC(2026, 10, 21, 16, 59))).toBe('2026-11-21');
    expect(vietnamDay(Date.UTC(2026, 10, 21, 17, 0))).toBe('2026-11-22');
  });

  it('quota resets at the next Vietnam midnight, written with +07:00', () => {
    const now = Date.UTC(2026, 10, 21, 9, 30);
    expect(formatVietnamTime(nextVietnamMidnight(now))).toBe('2026-11-22T00:00:00.000+07:00');
    expect(formatUtc(nextVietnamMidnight(now))).toBe('2026-11-21T17:00:00.000Z');
  });
});
