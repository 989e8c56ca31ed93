/** Byte helpers on Web APIs only (TextEncoder, btoa), so the SDK needs no Buffer. */

const encoder = new TextEncoder();

export type RawBody = string | Uint8Array | ArrayBuffer;

/** The bytes of a raw body: strings as UTF-8, Buffers and other views as they are. */
export function bytesOf(body: RawBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('the raw body must be a string, Buffer, Uint8Array or ArrayBuffer');
}

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Lowercase or uppercase hex to bytes; null when it is not hex of whole bytes. */
export function hexToBytes(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  // Chunked: String.fromCharCode with one argument per byte overflows the stack on large inputs.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text.replace(/\s+/g, ''));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * A copy backed by its own ArrayBuffer: WebCrypto's BufferSource type (TypeScript 5.7+) refuses views over
 * a SharedArrayBuffer-typed buffer, and a copy is cheap for the sizes here.
 */
export function ownBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const copy = new Uint8Array(new ArrayBuffer(bytes.byteLength));
  copy.set(bytes);
  return copy;
}
