/** Recipient phone numbers: the platform takes 84xxxxxxxxx; with `phone_format: lenient` also the local spellings. */
import type { Settings } from '../seed.ts';

const STRICT_PHONE = /^84\d{9}$/;

/** The phone as 84xxxxxxxxx, or null when the platform would refuse it. */
export function normalizePhone(value: unknown, format: Settings['phone_format']): string | null {
  if (typeof value === 'string') {
    if (STRICT_PHONE.test(value)) return value;
    if (format === 'lenient') {
      const digits = value.replace(/[\s.-]/g, '');
      if (/^\+84\d{9}$/.test(digits)) return digits.slice(1);
      if (/^0\d{9}$/.test(digits)) return `84${digits.slice(1)}`;
      if (/^\d{9}$/.test(digits)) return `84${digits}`;
      if (STRICT_PHONE.test(digits)) return digits;
    }
    return null;
  }
  if (typeof value === 'number' && format === 'lenient') return normalizePhone(String(value), format);
  return null;
}
