import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = 0;
let lastRandom: Uint8Array = new Uint8Array(10);

function encodeBase32(bytes: Uint8Array, length: number): string {
  let bits = 0;
  let value = 0;
  let output = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      output += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) output += CROCKFORD[(value << (5 - bits)) & 31];
  return output.slice(0, length);
}

function encodeTime(time: number): string {
  let remaining = time;
  let output = '';
  for (let index = 0; index < 10; index += 1) {
    output = CROCKFORD[remaining % 32] + output;
    remaining = Math.floor(remaining / 32);
  }
  return output;
}

function incrementRandom(bytes: Uint8Array): Uint8Array {
  const next = new Uint8Array(bytes);
  for (let index = next.length - 1; index >= 0; index -= 1) {
    const byte = next[index] ?? 0;
    if (byte < 255) {
      next[index] = byte + 1;
      return next;
    }
    next[index] = 0;
  }
  return next;
}

/**
 * A ULID-style identifier: 48-bit millisecond time then 80 random bits, Crockford base32.
 * Ids made in one process sort by creation time (monotonic within a millisecond), which lets
 * "newest first" listings order by id.
 */
export function createSortableId(prefix: string, time: number = Date.now()): string {
  if (time <= lastTime) {
    lastRandom = incrementRandom(lastRandom);
  } else {
    lastTime = time;
    lastRandom = new Uint8Array(randomBytes(10));
  }
  return `${prefix}_${encodeTime(lastTime)}${encodeBase32(lastRandom, 16)}`;
}

/** A random token of url-safe characters, for secrets such as API keys. */
export function createSecretToken(prefix: string, byteLength = 32): string {
  return `${prefix}${randomBytes(byteLength).toString('base64url')}`;
}
