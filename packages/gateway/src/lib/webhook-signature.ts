import { createHmac } from 'node:crypto';

/**
 * X-Gateway-Signature (docs/api.md, delivery reports): lowercase hex HMAC-SHA256 of the exact body bytes,
 * keyed with the API key that sent the message.
 */
export function signWebhookBody(body: Buffer, apiKey: string): string {
  return createHmac('sha256', apiKey).update(body).digest('hex');
}
