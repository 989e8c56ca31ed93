/**
 * Formatting shared by every page: times in Vietnam time whatever the browser's zone, money as
 * đồng with Vietnamese grouping in both languages, and the conversions between
 * <input type="datetime-local"> values (read as Vietnam time) and ISO 8601.
 */
import type { Language } from './i18n/index.tsx';

export const VIETNAM_TIME_ZONE = 'Asia/Ho_Chi_Minh';
const VIETNAM_OFFSET_MS = 7 * 60 * 60 * 1000;

const LOCALES: Record<Language, string> = { vi: 'vi-VN', en: 'en-GB' };

const money = new Intl.NumberFormat('vi-VN', { style: 'currency', currency: 'VND' });

/** 1234500 → "1.234.500 ₫" in either language. */
export function formatMoney(amount: number): string {
  return money.format(amount);
}

const numberFormats = new Map<Language, Intl.NumberFormat>();

export function formatNumber(value: number, language: Language): string {
  let format = numberFormats.get(language);
  if (!format) {
    format = new Intl.NumberFormat(LOCALES[language]);
    numberFormats.set(language, format);
  }
  return format.format(value);
}

export function formatPercent(value: number, language: Language): string {
  return new Intl.NumberFormat(LOCALES[language], { style: 'percent', maximumFractionDigits: 1 }).format(value);
}

const dateTimeFormats = new Map<Language, Intl.DateTimeFormat>();

/** An ISO time as Vietnam wall-clock time, e.g. "24/11/2026, 10:00:00"; "—" for null. */
export function formatDateTime(iso: string | null | undefined, language: Language): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  let format = dateTimeFormats.get(language);
  if (!format) {
    format = new Intl.DateTimeFormat(LOCALES[language], {
      timeZone: VIETNAM_TIME_ZONE,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    dateTimeFormats.set(language, format);
  }
  return format.format(date);
}

/** A Vietnam day "2026-11-18" as a short label ("18/11"). */
export function formatDay(day: string, language: Language): string {
  const date = new Date(`${day}T00:00:00+07:00`);
  if (Number.isNaN(date.getTime())) return day;
  return new Intl.DateTimeFormat(LOCALES[language], { timeZone: VIETNAM_TIME_ZONE, day: '2-digit', month: '2-digit' }).format(date);
}

/** "2026-11-24T10:00" typed in a datetime-local field, meant as Vietnam time → "2026-11-24T10:00:00+07:00". */
export function vietnamLocalToIso(local: string): string {
  const withSeconds = /T\d\d:\d\d$/.test(local) ? `${local}:00` : local;
  return `${withSeconds}+07:00`;
}

/** An ISO time → the datetime-local value showing it in Vietnam time ("2026-11-24T10:00"). */
export function isoToVietnamLocal(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return new Date(date.getTime() + VIETNAM_OFFSET_MS).toISOString().slice(0, 16);
}

/** A file name-safe Vietnam timestamp, e.g. "20261124-1000". */
export function fileStamp(now: Date = new Date()): string {
  return isoToVietnamLocal(now.toISOString()).replace(/[-:]/g, '').replace('T', '-');
}
