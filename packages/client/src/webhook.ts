/**
 * Delivery-report webhooks (docs/api.md, delivery reports): the service POSTs a JSON report with
 * `X-Gateway-Signature`, the lowercase hex HMAC-SHA256 of the raw body bytes keyed with the API key.
 *
 * Verification must run on the raw bytes as received: parsing and re-serialising the JSON changes
 * spacing or key order and gives a different MAC. WebCrypto's HMAC verify compares in constant time,
 * so no timing tells an attacker how much of a forged signature was right.
 */
import { bytesOf, hexToBytes, ownBuffer, utf8, type RawBody } from './bytes.ts';
import type { DeliveryReport } from './types.ts';

export const SIGNATURE_HEADER = 'x-gateway-signature';

/** A header value as frameworks hand it over (node:http gives string | string[] | undefined). */
export type SignatureHeader = string | readonly string[] | null | undefined;

const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;
/** WebCrypto's CryptoKey, named without the DOM library (not a global type under @types/node). */
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
/** Importing a key costs more than the MAC itself; receivers see the same key again and again. */
const keyCache = new Map<string, Promise<HmacKey>>();
const KEY_CACHE_SIZE = 16;

function hmacKey(apiKey: string): Promise<HmacKey> {
  let key = keyCache.get(apiKey);
  if (!key) {
    key = crypto.subtle.importKey('raw', ownBuffer(utf8(apiKey)), HMAC, false, ['sign', 'verify']);
    if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value as string);
    keyCache.set(apiKey, key);
  }
  return key;
}

/** The one signature in the header, or null when there is none or several (a duplicated header is suspect). */
function singleSignature(header: SignatureHeader): string | null {
  if (typeof header === 'string') return header.trim();
  if (Array.isArray(header) && header.length === 1 && typeof header[0] === 'string') return header[0].trim();
  return null;
}

/**
 * True when `signatureHeader` is the HMAC-SHA256 of `rawBody` under `apiKey`. Never throws for a bad
 * or missing signature (that is false); answer such a request with 401.
 */
export async function verifyWebhook(rawBody: RawBody, signatureHeader: SignatureHeader, apiKey: string): Promise<boolean> {
  if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('apiKey is required to verify a webhook');
  const signature = singleSignature(signatureHeader);
  const expected = signature === null ? null : hexToBytes(signature);
  if (expected === null || expected.length !== 32) return false;
  return crypto.subtle.verify('HMAC', await hmacKey(apiKey), ownBuffer(expected), ownBuffer(bytesOf(rawBody)));
}

/** The signature the service puts on `rawBody`: for tests of your receiver. */
export async function signWebhook(rawBody: RawBody, apiKey: string): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(apiKey), ownBuffer(bytesOf(rawBody))));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export type WebhookErrorReason = 'invalid_signature' | 'malformed_report';

/** Why a webhook request was refused, with the status to answer it with. */
export class WebhookError extends Error {
  override readonly name = 'WebhookError';
  /** 401 for a bad signature (the contract's rule), 400 for a signed body that is not a report. */
  readonly status: 401 | 400;

  constructor(
    readonly reason: WebhookErrorReason,
    message: string,
  ) {
    super(message);
    this.status = reason === 'invalid_signature' ? 401 : 400;
  }
}

const STRING_FIELDS = ['message_id', 'client_req_id', 'from', 'status', 'delivered_at', 'tracking_id'] as const;

function asReport(value: unknown): DeliveryReport | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  for (const field of STRING_FIELDS) if (typeof record[field] !== 'string') return null;
  if (record.to !== null && typeof record.to !== 'string') return null;
  return record as unknown as DeliveryReport;
}

/**
 * Verifies the signature, then parses the report. Rejects with a WebhookError (answer with its
 * `status`) when the signature is wrong or the signed body is not a delivery report.
 * Reports can arrive more than once: handle them idempotently per `message_id`.
 */
export async function parseDeliveryReport(rawBody: RawBody, signatureHeader: SignatureHeader, apiKey: string): Promise<DeliveryReport> {
  if (!(await verifyWebhook(rawBody, signatureHeader, apiKey))) {
    throw new WebhookError('invalid_signature', `missing or wrong ${SIGNATURE_HEADER}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytesOf(rawBody)));
  } catch {
    throw new WebhookError('malformed_report', 'the body is not JSON');
  }
  const report = asReport(parsed);
  if (!report) throw new WebhookError('malformed_report', 'the body is not a delivery report (the report fields are missing)');
  return report;
}
