/** Vietnam has no daylight saving: it is always UTC+7. */
export const VIETNAM_OFFSET_MS = 7 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

const DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * The earliest year taken: the gateway's clock starts at the Unix epoch. It also keeps Date.UTC
 * from reading the years 0000–0099 as 1900–1999, and makes a two-digit year padded with zeros
 * (0026 for 2026) an error instead of a time two thousand years ago.
 */
const FIRST_YEAR = 1970;

/**
 * Parses an ISO 8601 date-time. A value without an offset is read as Vietnam time (docs/api.md).
 * Returns epoch milliseconds, or null when the text is not a valid date-time: a field out of
 * range (month 13, 30 February, hour 24, an offset beyond ±23:59) or a year before 1970.
 */
export function parseDateTime(text: string): number | null {
  const match = DATE_TIME_PATTERN.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second = '0', fraction = '0', offset] = match;
  const parts = [year, month, day, hour, minute].map(Number) as [number, number, number, number, number];
  const [y, mo, d, h, mi] = parts;
  const s = Number(second);
  if (y < FIRST_YEAR || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const offsetMs = parseOffsetMs(offset);
  if (offsetMs === null) return null;
  const milliseconds = Math.floor(Number(`0.${fraction}`) * 1000);
  const wallClock = Date.UTC(y, mo - 1, d, h, mi, s, milliseconds);
  const check = new Date(wallClock);
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1) return null;
  return wallClock - offsetMs;
}

/** The offset in milliseconds (Vietnam's when there is none), or null when it is out of range. */
function parseOffsetMs(offset: string | undefined): number | null {
  if (offset === undefined) return VIETNAM_OFFSET_MS;
  if (offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4));
  if (hours > 23 || minutes > 59) return null;
  return sign * (hours * 60 + minutes) * 60 * 1000;
}

/** ISO 8601 UTC with milliseconds, the response format of docs/api.md. */
export function formatUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function formatUtcOrNull(epochMs: number | null | undefined): string | null {
  return epochMs === null || epochMs === undefined ? null : formatUtc(epochMs);
}

/** The last day vietnamDay named, with its bounds: nearly every call of a busy process asks about today. */
let lastDay = { start: 0, end: 0, text: '' };

/** The Vietnam calendar day (YYYY-MM-DD) that contains an instant: the unit of daily quotas. */
export function vietnamDay(epochMs: number): string {
  if (epochMs >= lastDay.start && epochMs < lastDay.end) return lastDay.text;
  const end = nextVietnamMidnight(epochMs);
  lastDay = { start: end - DAY_MS, end, text: new Date(epochMs + VIETNAM_OFFSET_MS).toISOString().slice(0, 10) };
  return lastDay.text;
}

/** The next Vietnam midnight after an instant, as epoch milliseconds. */
export function nextVietnamMidnight(epochMs: number): number {
  const local = epochMs + VIETNAM_OFFSET_MS;
  return Math.floor(local / DAY_MS) * DAY_MS + DAY_MS - VIETNAM_OFFSET_MS;
}

/** Formats an instant in Vietnam time with its offset, e.g. 2026-11-22T00:00:00.000+07:00. */
export function formatVietnamTime(epochMs: number): string {
  return `${new Date(epochMs + VIETNAM_OFFSET_MS).toISOString().slice(0, 23)}+07:00`;
}
