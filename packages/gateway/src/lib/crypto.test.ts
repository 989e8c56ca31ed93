import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decryptSecret,
  encryptSecret,
  isSealedUnder,
  masterKeyId,
  safeEqual,
  sealedPrefix,
  sha256Hex,
  UnknownMasterKeyError,
  UnreadableSecretError,
} from './crypto.ts';

/** A secret as the first format stored it: base64(iv | tag | ciphertext), no key id, no additional data. */
function sealInFirstFormat(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

describe('secrets at rest', () => {
  const key = randomBytes(32);

  it('round-trips and never stores the plaintext', () => {
    const sealed = encryptSecret('tms_live_secret', key);
    expect(sealed).not.toContain('tms_live_secret');
    expect(decryptSecret(sealed, key)).toBe('tms_live_secret');
    expect(encryptSecret('tms_live_secret', key)).not.toBe(sealed);
  });

  it('refuses a tampered ciphertext or the wrong key', () => {
    const sealed = encryptSecret('secret', key);
    const [mark, keyId, body] = sealed.split('.');
    const raw = Buffer.from(body!, 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => decryptSecret(`${mark}.${keyId}.${raw.toString('base64')}`, key)).toThrow(UnreadableSecretError);
    expect(() => decryptSecret(encryptSecret('secret', key), randomBytes(32))).toThrow(UnknownMasterKeyError);
  });
});

describe('master key ids', () => {
  it('names each key by a stable, short id that is not the key', () => {
    const key = randomBytes(32);
    expect(masterKeyId(key)).toMatch(/^[0-9a-f]{16}$/);
    expect(masterKeyId(Buffer.from(key))).toBe(masterKeyId(key));
    expect(masterKeyId(randomBytes(32))).not.toBe(masterKeyId(key));
    expect(key.toString('hex')).not.toContain(masterKeyId(key));
  });

  it('writes the id of the encrypting key into the ciphertext', () => {
    const key = randomBytes(32);
    const sealed = encryptSecret('secret', key);
    expect(sealed.startsWith(sealedPrefix(key))).toBe(true);
    expect(isSealedUnder(sealed, key)).toBe(true);
    expect(isSealedUnder(sealed, randomBytes(32))).toBe(false);
  });

  it('a ciphertext relabelled with the id of another held key is refused, not opened', () => {
    const key = randomBytes(32);
    const other = randomBytes(32);
    const relabelled = encryptSecret('secret', key).replace(masterKeyId(key), masterKeyId(other));
    expect(() => decryptSecret(relabelled, [key, other])).toThrow(UnreadableSecretError);
  });
});

describe('several master keys (rotation)', () => {
  const previous = randomBytes(32);
  const current = randomBytes(32);
  const ring = [current, previous];

  it('encrypts under the first key of the ring only', () => {
    const sealed = encryptSecret('secret', ring);
    expect(isSealedUnder(sealed, current)).toBe(true);
    expect(decryptSecret(sealed, current)).toBe('secret');
    expect(() => decryptSecret(sealed, previous)).toThrow(UnknownMasterKeyError);
  });

  it('reads secrets under any key of the ring, whichever the order', () => {
    expect(decryptSecret(encryptSecret('old', previous), ring)).toBe('old');
    expect(decryptSecret(encryptSecret('new', current), ring)).toBe('new');
    expect(decryptSecret(encryptSecret('old', previous), [previous, current])).toBe('old');
  });

  it('reads the first format (no key id) under the current or the previous key', () => {
    expect(decryptSecret(sealInFirstFormat('legacy under current', current), ring)).toBe('legacy under current');
    expect(decryptSecret(sealInFirstFormat('legacy under previous', previous), ring)).toBe('legacy under previous');
    expect(decryptSecret(sealInFirstFormat('legacy', current), current)).toBe('legacy');
    const legacy = sealInFirstFormat('legacy', previous);
    expect(isSealedUnder(legacy, current)).toBe(false);
    expect(isSealedUnder(legacy, previous)).toBe(false);
  });

  it('a process without the new key fails clearly, naming the key it lacks and the keys it holds', () => {
    const sealed = encryptSecret('secret', current);
    let failure: unknown;
    try {
      decryptSecret(sealed, previous);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(UnknownMasterKeyError);
    const unknown = failure as UnknownMasterKeyError;
    expect(unknown.keyId).toBe(masterKeyId(current));
    expect(unknown.heldKeyIds).toEqual([masterKeyId(previous)]);
    expect(unknown.message).toContain(masterKeyId(current));
    expect(unknown.message).toContain('TMS_MASTER_KEY');
    expect(unknown.message).not.toContain(current.toString('hex'));
  });

  it('a first-format secret under none of the keys is unreadable, not garbage', () => {
    expect(() => decryptSecret(sealInFirstFormat('secret', randomBytes(32)), ring)).toThrow(UnreadableSecretError);
    expect(() => decryptSecret('c2hvcnQ=', ring)).toThrow(UnreadableSecretError);
    expect(() => decryptSecret('tms1.abc', ring)).toThrow(UnreadableSecretError);
  });

  it('refuses an empty ring', () => {
    expect(() => encryptSecret('secret', [])).toThrow();
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
