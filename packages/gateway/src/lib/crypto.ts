import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

// crypto.hash, not createHash: a Hash object is a stream, and building one cost more than hashing
// an API key on every request (about 0.7 µs against 0.3).
export function sha256Hex(text: string | Buffer): string {
  return hash('sha256', text, 'hex');
}

/** Constant-time string comparison (lengths are compared in constant time via hashing). */
export function safeEqual(left: string, right: string): boolean {
  return timingSafeEqual(hash('sha256', left, 'buffer'), hash('sha256', right, 'buffer'));
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Marks the format that names its key: `tms1.<key id>.<base64(iv | tag | ciphertext)>`. */
const FORMAT_MARK = 'tms1';
/** The hex digits of a master key id. */
export const KEY_ID_HEX = 16;

/**
 * The master keys a process holds, in the order they are tried: the first one encrypts, the others
 * are only read (during a rotation). A single Buffer is a ring of one.
 */
export type SecretKeys = Buffer | readonly Buffer[];

/** A stored secret names a master key this process does not hold: the process must be given it. */
export class UnknownMasterKeyError extends Error {
  constructor(
    readonly keyId: string,
    readonly heldKeyIds: readonly string[],
  ) {
    super(
      `a stored secret is encrypted under master key ${keyId}, which this process does not hold (it holds ${heldKeyIds.join(', ')}); ` +
        'start it with that key as TMS_MASTER_KEY (or TMS_MASTER_KEY_PREVIOUS during a rotation)',
    );
    this.name = 'UnknownMasterKeyError';
  }
}

/** A stored secret that none of the process's keys opens: tampered, truncated, or sealed under a lost key. */
export class UnreadableSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableSecretError';
  }
}

const keyIds = new WeakMap<Buffer, string>();

/**
 * A public name for a master key, written into every ciphertext and safe to log: a truncated HMAC
 * of a fixed label, which says nothing about the key itself.
 */
export function masterKeyId(key: Buffer): string {
  let id = keyIds.get(key);
  if (id === undefined) {
    id = createHmac('sha256', key).update('tms master key id').digest('hex').slice(0, KEY_ID_HEX);
    keyIds.set(key, id);
  }
  return id;
}

/** What every ciphertext sealed under `key` begins with (the store selects secrets still under other keys by it). */
export function sealedPrefix(key: Buffer): string {
  return `${FORMAT_MARK}.${masterKeyId(key)}.`;
}

/** What every ciphertext that names its key begins with; the first format (plain base64, no key id) does not. */
export const KEYED_FORMAT_MARK = `${FORMAT_MARK}.`;

/** The length of every sealedPrefix(): the format mark, a key id and a dot. */
export const SEALED_PREFIX_LENGTH = KEYED_FORMAT_MARK.length + KEY_ID_HEX + 1;

/** The key id a ciphertext (or its sealedPrefix) names; null for the first format, which names none. Nothing is decrypted. */
export function sealedKeyId(encoded: string): string | null {
  const parts = encoded.split('.');
  return parts.length === 3 && parts[0] === FORMAT_MARK ? parts[1]! : null;
}

/** Whether `encoded` was sealed under `key` in the current format (nothing is decrypted). */
export function isSealedUnder(encoded: string, key: Buffer): boolean {
  return encoded.startsWith(sealedPrefix(key));
}

function ringOf(keys: SecretKeys): readonly Buffer[] {
  const ring = Buffer.isBuffer(keys) ? [keys] : keys;
  if (ring.length === 0) throw new Error('no master key given');
  return ring;
}

/**
 * AES-256-GCM under the first key, encoded as `tms1.<key id>.<base64(iv | tag | ciphertext)>`.
 * The prefix is authenticated as additional data, so it cannot be swapped to another key's id.
 */
export function encryptSecret(plaintext: string, keys: SecretKeys): string {
  const key = ringOf(keys)[0]!;
  const header = `${FORMAT_MARK}.${masterKeyId(key)}`;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(header, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${header}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

function open(raw: Buffer, key: Buffer, additionalData: Buffer | null): string {
  if (raw.length < IV_BYTES + TAG_BYTES) throw new UnreadableSecretError('a stored secret is too short to be a ciphertext');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  if (additionalData) decipher.setAAD(additionalData);
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/**
 * Opens a secret sealed by encryptSecret under any of `keys`. The current format names its key, so
 * exactly one decryption is attempted and a key this process lacks is reported as such. The first
 * format (plain base64, written before keys had ids) is tried under each key in order; which key
 * opened it is all that its timing could tell, and that is no secret.
 */
export function decryptSecret(encoded: string, keys: SecretKeys): string {
  const ring = ringOf(keys);
  const parts = encoded.split('.');
  if (parts.length === 3 && parts[0] === FORMAT_MARK) {
    const keyId = parts[1]!;
    const key = ring.find((candidate) => masterKeyId(candidate) === keyId);
    if (!key) throw new UnknownMasterKeyError(keyId, ring.map(masterKeyId));
    try {
      return open(Buffer.from(parts[2]!, 'base64'), key, Buffer.from(`${FORMAT_MARK}.${keyId}`, 'utf8'));
    } catch (error) {
      if (error instanceof UnreadableSecretError) throw error;
      throw new UnreadableSecretError(`a stored secret under master key ${keyId} fails authentication: it was altered or damaged`);
    }
  }
  if (parts.length !== 1) throw new UnreadableSecretError('a stored secret is in no format this version knows');
  const raw = Buffer.from(encoded, 'base64');
  for (const key of ring) {
    try {
      return open(raw, key, null);
    } catch (error) {
      if (error instanceof UnreadableSecretError) throw error;
    }
  }
  throw new UnreadableSecretError(
    `a stored secret (first format, without a key id) opens under none of the master keys this process holds (${ring.map(masterKeyId).join(', ')}): it was encrypted under another key, or altered`,
  );
}
