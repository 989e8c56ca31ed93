/**
 * RSA for the `/rsa/message/template` path: OAEP with SHA-256 as the OAEP (label) hash and SHA-1 for MGF1,
 * ciphertext in base64 — the scheme of Java's `RSA/ECB/OAEPWithSHA-256AndMGF1Padding`.
 *
 * Node's `privateDecrypt({ oaepHash: 'sha256' })` would use SHA-256 for MGF1 as well, so we do the raw RSA
 * step natively (`RSA_NO_PADDING`, fast) and decode OAEP (RFC 8017 §7.1.2) by hand.
 */
import { constants, createHash, createPrivateKey, createPublicKey, generateKeyPair, privateDecrypt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

const LABEL_HASH = createHash('sha256').update(Buffer.alloc(0)).digest();
const H_LEN = 32; // SHA-256 output, the OAEP hash
const MGF_LEN = 20; // SHA-1 output, the MGF1 hash

export interface RsaKey {
  privateKey: KeyObject;
  /** SPKI PEM, "-----BEGIN PUBLIC KEY-----". */
  publicKeyPem: string;
  /** Base64 of the SPKI DER (no armour, no line breaks). */
  publicKeyDerBase64: string;
  modulusBytes: number;
}

function fromPrivateKey(privateKey: KeyObject): RsaKey {
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error('RSA key expected');
  const pub = createPublicKey(privateKey);
  const bits = privateKey.asymmetricKeyDetails?.modulusLength ?? 2048;
  return {
    privateKey,
    publicKeyPem: pub.export({ type: 'spki', format: 'pem' }).toString(),
    publicKeyDerBase64: pub.export({ type: 'spki', format: 'der' }).toString('base64'),
    modulusBytes: Math.ceil(bits / 8),
  };
}

export async function generateRsaKey(bits: number): Promise<RsaKey> {
  const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: bits, publicExponent: 0x10001 });
  return fromPrivateKey(privateKey);
}

export function rsaKeyFromPem(pem: string): RsaKey {
  return fromPrivateKey(createPrivateKey(pem));
}

function mgf1Sha1(seed: Buffer, length: number): Buffer {
  const out = Buffer.alloc(Math.ceil(length / MGF_LEN) * MGF_LEN);
  const counter = Buffer.alloc(4);
  for (let i = 0, off = 0; off < length; i++, off += MGF_LEN) {
    counter.writeUInt32BE(i, 0);
    createHash('sha1').update(seed).update(counter).digest().copy(out, off);
  }
  return out.subarray(0, length);
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Strict-enough base64 check (also accepts base64url, which some clients send). */
function decodeBase64(text: string): Buffer | null {
  const t = text.replace(/\s+/g, '');
  if (t.length === 0) return null;
  if (BASE64.test(t)) return Buffer.from(t, 'base64');
  if (/^[A-Za-z0-9_-]+={0,2}$/.test(t)) return Buffer.from(t, 'base64url');
  return null;
}

/** Decrypts one base64 ciphertext; returns null when it is not a valid OAEP(SHA-256, MGF1-SHA-1) ciphertext for this key. */
export function oaepDecrypt(key: RsaKey, base64: string): Buffer | null {
  const ct = decodeBase64(base64);
  if (!ct || ct.length !== key.modulusBytes) return null;
  let em: Buffer;
  try {
    em = privateDecrypt({ key: key.privateKey, padding: constants.RSA_NO_PADDING }, ct);
  } catch {
    return null;
  }
  const k = key.modulusBytes;
  if (em.length !== k || k < 2 * H_LEN + 2) return null;
  const maskedSeed = em.subarray(1, 1 + H_LEN);
  const maskedDb = em.subarray(1 + H_LEN);
  const seedMask = mgf1Sha1(maskedDb, H_LEN);
  const seed = Buffer.alloc(H_LEN);
  for (let i = 0; i < H_LEN; i++) seed[i] = (maskedSeed[i] as number) ^ (seedMask[i] as number);
  const dbMask = mgf1Sha1(seed, k - H_LEN - 1);
  const db = Buffer.alloc(k - H_LEN - 1);
  for (let i = 0; i < db.length; i++) db[i] = (maskedDb[i] as number) ^ (dbMask[i] as number);
  let ok = em[0] === 0 && timingSafeEqual(db.subarray(0, H_LEN), LABEL_HASH);
  let sep = -1;
  for (let i = H_LEN; i < db.length; i++) {
    const b = db[i];
    if (b === 0x01) {
      sep = i;
      break;
    }
    if (b !== 0x00) {
      ok = false;
      break;
    }
  }
  if (!ok || sep < 0) return null;
  return db.subarray(sep + 1);
}
