import { describe, expect, it } from 'vitest';
import { carrierOf, normalizePhone } from './phone.ts';

describe('normalizePhone', () => {
  it.each([
    ['0912345678', '84912345678'],
    ['+84912345678', '84912345678'],
    ['84912345678', '84912345678'],
    ['912345678', '84912345678'],
    ['(+84) 912.345-678', '84912345678'],
    ['091 234 5678', '84912345678'],
  ])('%s becomes %s', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it('does not validate: a malformed number is kept for the platform to reject', () => {
    expect(normalizePhone('12ab')).toBe('8412ab');
  });

  it('returns empty when nothing is left after stripping', () => {
    expect(normalizePhone(' ( ) - ')).toBe('');
  });
});

describe('carrierOf', () => {
  it.each([
    ['84961234567', 'Viettel'],
    ['84321234567', 'Viettel'],
    ['84901234567', 'Mobifone'],
    ['84912345678', 'Vinaphone'],
    ['84921234567', 'Vietnamobile'],
    ['84991234567', 'Gmobile'],
    ['84871234567', 'Itel'],
    ['84551234567', 'Reddi'],
  ])('%s is %s', (phone, carrier) => {
    expect(carrierOf(phone)).toBe(carrier);
  });

  it('is null for an unknown prefix', () => {
    expect(carrierOf('84111234567')).toBeNull();
  });
});
