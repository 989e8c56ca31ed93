/**
 * Vietnam time (UTC+7, no daylight saving): daily quotas reset at its midnight, and the service
 * reserves quota per Vietnam calendar day.
 */
const OFFSET_MS = 7 * 60 * 60 * 1000;
export const DAY_MS = 24 * 60 * 60 * 1000;

/** `YYYY-MM-DD` of the Vietnam day containing the instant. */
export function vietnamDay(epochMs: number): string {
  return new Date(epochMs + OFFSET_MS).toISOString().slice(0, 10);
}

/** ISO 8601 with the +07:00 offset, as the service writes reset_at: `2026-11-22T00:00:00.000+07:00`. */
export function vietnamIso(epochMs: number): string {
  return `${new Date(epochMs + OFFSET_MS).toISOString().slice(0, 23)}+07:00`;
}

/** Parses `HH:MM` (Vietnam time of day) into ms after midnight; throws on anything else. */
export function timeOfDayMs(text: string): number {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  if (!match) throw new TypeError(`time of day must be HH:MM (00:00 to 23:59), got "${text}"`);
  return (Number(match[1]) * 60 + Number(match[2])) * 60_000;
}
