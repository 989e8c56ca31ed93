/** Vietnam has no daylight saving: it is always UTC+7. */
export const VIETNAM_OFFSET_MS = 7 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

const DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses an ISO 8601 date-time. A value without an offset is read as Vietnam time (decisions.md).
 * Returns epoch milliseconds, or null when the text is not a valid date-time.
 */
export function parseDateTime(text: string): number | null {
  const match = DATE_TIME_PATTERN.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second = '0', fraction = '0', offset] = match;
  const parts = [year, month, day, hour, minute].map(Number) as [number, number, number, number, number];
  const [y, mo, d, h, mi] = parts;
  const s = Number(second);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const milliseconds = Math.floor(Number(`0.${fraction}`) * 1000);
  const wallClock = Date.UTC(y, mo - 1, d, h, mi, s, milliseconds);
  const check = new Date(wallClock);
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1) return null;
  return wallClock - parseOffsetMs(offset);
}

function parseOffsetMs(offset: string | undefined): number {
  if (offset === undefined) return VIETNAM_OFFSET_MS;
  if (offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60 * 1000;
}

/** ISO 8601 UTC with milliseconds, the response format of decisions.md. */
export function formatUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function formatUtcOrNull(epochMs: number | null | undefined): string | null {
  return epochMs === null || epochMs === undefined ? null : formatUtc(epochMs);
}

/** The Vietnam calendar day (YYYY-MM-DD) that contains an instant: the unit of daily quotas. */
export function vietnamDay(epochMs: number): string {
  return new Date(epochMs + VIETNAM_OFFSET_MS).toISOString().slice(0, 10);
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
