/**
 * encryptPhone: the `rsa_phone` of POST /messages/rsa. RSA-OAEP with SHA-256 as the OAEP hash and
 * SHA-1 for MGF1 (Java's `RSA/ECB/OAEPWithSHA-256AndMGF1Padding`), standard base64 (docs/api.md).
 *
 * Neither WebCrypto nor Node's crypto can take a different hash for MGF1 than for OAEP, so the OAEP
 * encoding (RFC 8017 7.1.1) is done here and the RSA step is a modular power on BigInt: a public
 * exponent is small (65537 is 17 multiplications), so this is fast, and it needs no Node API at all.
 * Hashes and randomness come from WebCrypto, present in Node 20+, Bun, Deno and edge runtimes.
 */
import { base64ToBytes, bytesToBase64, ownBuffer, utf8 } from './bytes.ts';

const OAEP_HASH_LENGTH = 32; // SHA-256
const MGF1_HASH_LENGTH = 20; // SHA-1
const RSA_ENCRYPTION_OID = '1.2.840.113549.1.1.1';

export interface RsaPublicKey {
  modulus: bigint;
  exponent: bigint;
  /** Modulus length in bytes (k in RFC 8017). */
  size: number;
}

interface DerNode {
  tag: number;
  content: Uint8Array;
  /** Offset of the byte after this node in the input. */
  end: number;
}

function readDer(bytes: Uint8Array, offset: number): DerNode {
  const tag = bytes[offset];
  let lengthByte = bytes[offset + 1];
  if (tag === undefined || lengthByte === undefined) throw new TypeError('RSA public key: truncated DER');
  let length = lengthByte;
  let cursor = offset + 2;
  if (lengthByte & 0x80) {
    const count = lengthByte & 0x7f;
    if (count === 0 || count > 4) throw new TypeError('RSA public key: unsupported DER length');
    length = 0;
    for (let i = 0; i < count; i += 1) {
      lengthByte = bytes[cursor + i];
      if (lengthByte === undefined) throw new TypeError('RSA public key: truncated DER');
      length = length * 256 + lengthByte;
    }
    cursor += count;
  }
  if (cursor + length > bytes.length) throw new TypeError('RSA public key: truncated DER');
  return { tag, content: bytes.subarray(cursor, cursor + length), end: cursor + length };
}

function children(node: DerNode): DerNode[] {
  const nodes: DerNode[] = [];
  for (let offset = 0; offset < node.content.length; ) {
    const child = readDer(node.content, offset);
    nodes.push(child);
    offset = child.end;
  }
  return nodes;
}

function bigintOf(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function oidOf(bytes: Uint8Array): string {
  const first = bytes[0] ?? 0;
  const parts = [Math.floor(first / 40), first % 40];
  let value = 0;
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

/** RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER } (PKCS#1). */
function fromPkcs1(der: Uint8Array): RsaPublicKey {
  const sequence = readDer(der, 0);
  const [modulus, exponent] = children(sequence);
  if (sequence.tag !== 0x30 || modulus?.tag !== 0x02 || exponent?.tag !== 0x02) throw new TypeError('RSA public key: not an RSAPublicKey structure');
  const n = bigintOf(modulus.content);
  return { modulus: n, exponent: bigintOf(exponent.content), size: Math.ceil(n.toString(16).length / 2) };
}

/** SubjectPublicKeyInfo ::= SEQUENCE { SEQUENCE { OID rsaEncryption, NULL }, BIT STRING RSAPublicKey }. */
function fromSpki(der: Uint8Array): RsaPublicKey {
  const [algorithm, bitString] = children(readDer(der, 0));
  const oid = algorithm ? children(algorithm)[0] : undefined;
  if (algorithm?.tag !== 0x30 || oid?.tag !== 0x06 || bitString?.tag !== 0x03) throw new TypeError('RSA public key: not a SubjectPublicKeyInfo');
  if (oidOf(oid.content) !== RSA_ENCRYPTION_OID) throw new TypeError('RSA public key: the key is not an RSA key');
  // The first byte of a BIT STRING counts unused bits (0 for a key).
  return fromPkcs1(bitString.content.subarray(1));
}

/**
 * Reads a public key as the console or the platform gives it: PEM `BEGIN PUBLIC KEY` (SPKI),
 * PEM `BEGIN RSA PUBLIC KEY` (PKCS#1), or the bare base64 of the SPKI DER.
 */
export function parseRsaPublicKey(text: string): RsaPublicKey {
  const pem = /-----BEGIN (RSA )?PUBLIC KEY-----([\s\S]*?)-----END \1?PUBLIC KEY-----/.exec(text);
  const base64 = pem ? pem[2]! : text;
  if (!/^[A-Za-z0-9+/=\s]+$/.test(base64)) throw new TypeError('RSA public key: expected a PEM or base64 DER public key');
  const der = base64ToBytes(base64);
  const key = pem?.[1] ? fromPkcs1(der) : fromSpki(der);
  if (key.size < 2 * OAEP_HASH_LENGTH + 2 + 11) throw new TypeError('RSA public key: modulus too small');
  return key;
}

async function digest(algorithm: 'SHA-1' | 'SHA-256', data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest(algorithm, ownBuffer(data)));
}

/** MGF1 (RFC 8017 B.2.1) with SHA-1, the platform's choice. */
async function mgf1Sha1(seed: Uint8Array, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(Math.ceil(length / MGF1_HASH_LENGTH) * MGF1_HASH_LENGTH);
  const input = new Uint8Array(seed.length + 4);
  input.set(seed);
  for (let counter = 0, offset = 0; offset < length; counter += 1, offset += MGF1_HASH_LENGTH) {
    new DataView(input.buffer).setUint32(seed.length, counter);
    out.set(await digest('SHA-1', input), offset);
  }
  return out.subarray(0, length);
}

function xorInto(target: Uint8Array, mask: Uint8Array): void {
  for (let i = 0; i < target.length; i += 1) target[i] = target[i]! ^ mask[i]!;
}

/** EME-OAEP encoding with the empty label (RFC 8017 7.1.1 step 2). */
export async function oaepEncode(message: Uint8Array, size: number, random: Uint8Array = crypto.getRandomValues(new Uint8Array(OAEP_HASH_LENGTH))): Promise<Uint8Array> {
  const hLen = OAEP_HASH_LENGTH;
  if (message.length > size - 2 * hLen - 2) throw new RangeError(`RSA-OAEP: message too long for a ${size * 8}-bit key`);
  const db = new Uint8Array(size - hLen - 1);
  db.set(await digest('SHA-256', new Uint8Array(0)));
  db[db.length - message.length - 1] = 0x01;
  db.set(message, db.length - message.length);
  const seed = random.slice(0, hLen);
  xorInto(db, await mgf1Sha1(seed, db.length));
  xorInto(seed, await mgf1Sha1(db, hLen));
  const encoded = new Uint8Array(size);
  encoded.set(seed, 1);
  encoded.set(db, 1 + hLen);
  return encoded;
}

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

function toBytes(value: bigint, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let rest = value;
  for (let i = size - 1; i >= 0; i -= 1) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

/** Raw RSA encryption of an already padded block (RSAEP, RFC 8017 5.1.1). */
export function rsaEncryptRaw(key: RsaPublicKey, block: Uint8Array): Uint8Array {
  return toBytes(modPow(bigintOf(block), key.exponent, key.modulus), key.size);
}

/**
 * The number as the service normalises it (docs/api.md): without spaces, dots, dashes and
 * parentheses, `+84…` and `0…` as `84…`, `84` put in front otherwise. The service never sees an
 * RSA number in the clear, so it cannot normalise it: we do it before encrypting.
 */
export function normalizePhone(phone: string): string {
  const compact = phone.replace(/[\s.\-()]/g, '');
  if (compact.startsWith('+84')) return compact.slice(1);
  if (compact.startsWith('0')) return `84${compact.slice(1)}`;
  return compact.startsWith('84') ? compact : `84${compact}`;
}

export interface EncryptPhoneOptions {
  /** Normalise to `84…` first (default true). */
  normalize?: boolean;
}

/**
 * `rsa_phone` for POST /messages/rsa: the phone encrypted with the sender account's public key
 * (PEM SPKI, PEM PKCS#1 or base64 DER), RSA-OAEP SHA-256 / MGF1-SHA-1, standard base64.
 */
export async function encryptPhone(phone: string, publicKey: string | RsaPublicKey, options: EncryptPhoneOptions = {}): Promise<string> {
  if (typeof phone !== 'string' || phone.trim() === '') throw new TypeError('phone is required');
  const key = typeof publicKey === 'string' ? parseRsaPublicKey(publicKey) : publicKey;
  const plain = options.normalize === false ? phone : normalizePhone(phone);
  return bytesToBase64(rsaEncryptRaw(key, await oaepEncode(utf8(plain), key.size)));
}
