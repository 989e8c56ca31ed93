import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Console passwords, hashed with scrypt (memory-hard, in node:crypto): N = 2^15, r = 8, p = 1 uses
 * 32 MiB and about 50 ms per hash on one core here, which makes guessing slow without letting a
 * burst of sign-ins exhaust memory. The parameters are stored with each hash, so they can be raised
 * later without invalidating existing passwords.
 */
const COST = 2 ** 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

function deriveKey(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  const maxmem = 256 * (options.N ?? COST) * (options.r ?? BLOCK_SIZE);
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...options, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await deriveKey(password, salt, { N: COST, r: BLOCK_SIZE, p: PARALLELISM });
  return ['scrypt', COST, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Compares in constant time; a malformed stored hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, cost, blockSize, parallelism, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !cost || !blockSize || !parallelism || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await deriveKey(password, Buffer.from(salt, 'base64'), { N: Number(cost), r: Number(blockSize), p: Number(parallelism) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash of a password nobody knows. Sign-in verifies against it when the e-mail address is unknown,
 * so an unknown address takes as long as a wrong password and does not reveal who has an account.
 */
export const UNKNOWN_USER_HASH = `scrypt$${COST}$${BLOCK_SIZE}$${PARALLELISM}$${randomBytes(SALT_BYTES).toString('base64')}$${randomBytes(KEY_BYTES).toString('base64')}`;
