import { createHmac } from 'node:crypto';

/**
 * X-Gateway-Signature (docs/api.md, delivery reports): lowercase hex HMAC-SHA256 of the exact body bytes,
 * keyed with the API key that sent the message.
 */
export function signWebhookBody(body: Buffer, apiKey: string): string {
  return createHmac('sha256', apiKey).update(body).digest('hex');
}

export const SIGNATURE_HEADER = 'x-gateway-signature';
/** Headers beyond the contract's, documented for receivers: deduplicate on the delivery id. */
export const DELIVERY_ID_HEADER = 'x-gateway-delivery-id';
export const ATTEMPT_HEADER = 'x-gateway-attempt';
export const WEBHOOK_USER_AGENT = 'TMS-Webhooks/1';

/** The headers every attempt of one delivery sends, but its attempt number. */
export function deliveryReportHeaders(input: { body: Buffer; signingKey: string; deliveryId: string }): Record<string, string> {
  return {
    'content-type': 'application/json',
    [SIGNATURE_HEADER]: signWebhookBody(input.body, input.signingKey),
    [DELIVERY_ID_HEADER]: input.deliveryId,
    'user-agent': WEBHOOK_USER_AGENT,
  };
}
