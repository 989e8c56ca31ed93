import { randomBytes, randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 40 bits: the random part is kept as two such halves, each exact in a double. */
const HALF = 2 ** 40;

/**
 * Random bytes are drawn in blocks: a call into the system's generator per millisecond cost more
 * than the rest of the id.
 */
const randomPool = Buffer.alloc(4096);
let poolOffset = randomPool.length;

function drawRandomHalf(): number {
  if (poolOffset + 5 > randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  const value = randomPool.readUIntBE(poolOffset, 5);
  poolOffset += 5;
  return value;
}

/** Every pair of base32 digits (10 bits), so that encoding takes half as many steps. */
const DIGIT_PAIRS = Array.from({ length: 1024 }, (_, value) => CROCKFORD[value >> 5]! + CROCKFORD[value & 31]!);

/** `value` (below 2^(5 × digits), `digits` even) as base32 digits, most significant first. */
function encodeBase32(value: number, digits: number): string {
  let remaining = value;
  let output = '';
  for (let index = 0; index < digits; index += 2) {
    output = DIGIT_PAIRS[remaining % 1024]! + output;
    remaining = Math.floor(remaining / 1024);
  }
  return output;
}

let lastTime = 0;
let lastTimeText = '';
let randomHigh = 0;
let randomLow = 0;

/**
 * A ULID-style identifier: 48-bit millisecond time then 80 random bits, Crockford base32.
 * Ids made in one process sort by creation time (monotonic within a millisecond: the random part
 * counts up), which lets "newest first" listings order by id.
 */
export function createSortableId(prefix: string, time: number = Date.now()): string {
  if (time <= lastTime) {
    randomLow += 1;
    if (randomLow === HALF) {
      randomLow = 0;
      randomHigh = (randomHigh + 1) % HALF;
    }
  } else {
    lastTime = time;
    lastTimeText = encodeBase32(time, 10);
    randomHigh = drawRandomHalf();
    randomLow = drawRandomHalf();
  }
  return `${prefix}_${lastTimeText}${encodeBase32(randomHigh, 8)}${encodeBase32(randomLow, 8)}`;
}

/**
 * Every id createSortableId(prefix, t) made for a time t before `time` sorts below this text, and
 * every one made for `time` or later above it: an id begins with its time.
 */
export function sortableIdFloor(prefix: string, time: number): string {
  return `${prefix}_${encodeBase32(time, 10)}`;
}

/** A random token of url-safe characters, for secrets such as API keys. */
export function createSecretToken(prefix: string, byteLength = 32): string {
  return `${prefix}${randomBytes(byteLength).toString('base64url')}`;
}
