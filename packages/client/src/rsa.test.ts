import { constants, createHash, generateKeyPairSync, privateDecrypt, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encryptPhone, normalizePhone, parseRsaPublicKey } from './rsa.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const spkiPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

/** RFC 8017 7.1.2 decoding with SHA-256 for OAEP and SHA-1 for MGF1, written independently of rsa.ts. */
function decrypt(key: KeyObject, base64: string): string | null {
  const em = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, Buffer.from(base64, 'base64'));
  const mgf1 = (seed: Buffer, length: number) => {
    const blocks: Buffer[] = [];
    for (let counter = 0; blocks.length * 20 < length; counter += 1) {
      const c = Buffer.alloc(4);
      c.writeUInt32BE(counter);
      blocks.push(createHash('sha1').update(seed).update(c).digest());
    }
    return Buffer.concat(blocks).subarray(0, length);
  };
  const maskedSeed = em.subarray(1, 33);
  const maskedDb = em.subarray(33);
  const seed = Buffer.from(maskedSeed.map((b, i) => b ^ mgf1(maskedDb, 32)[i]!));
  const db = Buffer.from(maskedDb.map((b, i) => b ^ mgf1(seed, maskedDb.length)[i]!));
  if (em[0] !== 0 || !db.subarray(0, 32).equals(createHash('sha256').digest())) return null;
  const separator = db.indexOf(1, 32);
  return separator < 0 ? null : db.subarray(separator + 1).toString('utf8');
}

describe('encryptPhone', () => {
  it('is RSA-OAEP with SHA-256 and MGF1-SHA-1, standard base64 of one modulus-sized block', async () => {
    const ciphertext = await encryptPhone('84912345678', spkiPem);
    expect(ciphertext).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(ciphertext, 'base64')).toHaveLength(256);
    expect(decrypt(privateKey, ciphertext)).toBe('84912345678');
  });

  it('is not what Node’s own OAEP makes (MGF1 with SHA-256): Node cannot decrypt it with oaepHash sha256', async () => {
    const ciphertext = await encryptPhone('84912345678', spkiPem);
    expect(() => privateDecrypt({ key: privateKey, oaepHash: 'sha256' }, Buffer.from(ciphertext, 'base64'))).toThrow();
  });

  it('is randomised: the same phone encrypts differently each time', async () => {
    expect(await encryptPhone('84912345678', spkiPem)).not.toBe(await encryptPhone('84912345678', spkiPem));
  });

  it('normalises the number as the service would (it cannot, it never sees it)', async () => {
    expect(decrypt(privateKey, await encryptPhone('+84 912.345-678', spkiPem))).toBe('84912345678');
    expect(decrypt(privateKey, await encryptPhone('0912 345 678', spkiPem))).toBe('84912345678');
    expect(decrypt(privateKey, await encryptPhone('0912345678', spkiPem, { normalize: false }))).toBe('0912345678');
    expect(normalizePhone('912345678')).toBe('84912345678');
    expect(normalizePhone('(091) 234-5678')).toBe('84912345678');
  });

  it('reads SPKI PEM, PKCS#1 PEM and bare base64 DER keys, and refuses others', async () => {
    const pkcs1 = publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const der = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    for (const key of [pkcs1, der]) expect(decrypt(privateKey, await encryptPhone('84912345678', key))).toBe('84912345678');
    expect(parseRsaPublicKey(spkiPem).size).toBe(256);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => parseRsaPublicKey(ec)).toThrow(/not an RSA key/);
    expect(() => parseRsaPublicKey('hello world!')).toThrow(TypeError);
  });
});
