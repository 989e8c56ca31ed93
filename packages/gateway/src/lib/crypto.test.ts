import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret, safeEqual, sha256Hex } from './crypto.ts';

describe('secrets at rest', () => {
  const key = randomBytes(32);

  it('round-trips and never stores the plaintext', () => {
    const sealed = encryptSecret('tms_live_secret', key);
    expect(sealed).not.toContain('tms_live_secret');
    expect(decryptSecret(sealed, key)).toBe('tms_live_secret');
    expect(encryptSecret('tms_live_secret', key)).not.toBe(sealed);
  });

  it('refuses a tampered ciphertext or the wrong key', () => {
    const sealed = Buffer.from(encryptSecret('secret', key), 'base64');
    sealed[sealed.length - 1]! ^= 1;
    expect(() => decryptSecret(sealed.toString('base64'), key)).toThrow();
    expect(() => decryptSecret(encryptSecret('secret', key), randomBytes(32))).toThrow();
  });
});

describe('comparisons', () => {
  it('safeEqual compares values of any length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });

  it('sha256Hex is the lowercase hex digest', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
