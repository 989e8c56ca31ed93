/**
 * The benchmarks' recipients: a different Vietnamese mobile number (0 + 9 digits) for every n below
 * 100,000,000, in no order. Real recipients' numbers arrive in no order, and an index of numbers
 * inserted in order only ever writes its last page: numbers counted up from one flattered every
 * acceptance figure (README, Benchmarks). The n-th number is n times a multiplier coprime to 10^8,
 * plus an offset, modulo 10^8: a permutation, so no two n share a number.
 */
const NUMBERS = 100_000_000;
const MULTIPLIER = 48_271;
const OFFSET = 12_345;

export function phoneOf(n: number): string {
  return `09${String(((n % NUMBERS) * MULTIPLIER + OFFSET) % NUMBERS).padStart(8, '0')}`;
}
