/**
 * The delivery report as an OpenAPI 3.1 webhook: the body of deliveryReportBody, the headers
 * WebhookSender sends, and the acknowledgement and retry rules of the configured webhook settings.
 */
import type { OpenApiDocument, PathItem, SchemaObject } from './document-types.ts';
import { EXAMPLE, EXAMPLE_DELIVERY_REPORT } from './example-data.ts';

export interface WebhookRules {
  /** How long the gateway waits for an answer. */
  timeoutMs: number;
  /** The delay before each retry, counted from the end of the failed attempt. */
  retryDelaysMs: readonly number[];
}

/** 1000 → "1 s", 120000 → "2 min". */
export function formatDelay(milliseconds: number): string {
  if (milliseconds % 60_000 === 0) return `${milliseconds / 60_000} min`;
  if (milliseconds % 1000 === 0) return `${milliseconds / 1000} s`;
  return `${milliseconds} ms`;
}

export const DELIVERY_REPORT_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'Exactly these fields, in this order. Serialised once, when the message is delivered: every attempt sends the same bytes.',
  required: ['message_id', 'client_req_id', 'from', 'to', 'status', 'delivered_at', 'tracking_id'],
  additionalProperties: false,
  properties: {
    message_id: { type: 'string', description: 'The `msg_id` the send answered with' },
    client_req_id: { type: 'string', description: 'Your `tracking_id`, or the `msg_id` when you gave none' },
    from: { type: 'string', description: 'The sender account (`oa_id`)' },
    to: { type: ['string', 'null'], description: 'The normalised number (84…); null for RSA messages' },
    status: { type: 'string', enum: ['SUCCESS'], description: 'Always SUCCESS: failed messages send no report' },
    delivered_at: { type: 'string', format: 'date-time', description: 'When the platform delivered it: ISO 8601 UTC with milliseconds' },
    tracking_id: { type: 'string', description: "The platform's message id" },
  },
};

function deliveryReportOperation(rules: WebhookRules): PathItem {
  const timeout = formatDelay(rules.timeoutMs);
  const ladder = rules.retryDelaysMs.map(formatDelay).join(', ');
  return {
    post: {
      operationId: 'receiveDeliveryReport',
      summary: 'Delivery report, POSTed to your webhook URL',
      tags: ['Delivery reports'],
      description: [
        "When a message becomes `delivered`, the gateway POSTs this report to the `webhook_url` of the API key that sent it (set by the operator). Each message has at most one report: deduplicate on `message_id` or `X-Gateway-Delivery-Id`.",
        '**Verify before parsing.** `X-Gateway-Signature` is the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the API key that sent the message. Compute it over the raw bytes with a timing-safe compare and answer 401 when it does not match; re-serialising parsed JSON gives other bytes.',
        `**Acknowledge.** Answer any 2xx within ${timeout}; do slow work after answering.`,
        `**Retries.** A non-2xx answer (a 3xx too: redirects are not followed), no answer within ${timeout} or a connection error is a failed attempt. It is retried ${rules.retryDelaysMs.length} times, ${ladder} after the previous attempt ended. After the last one the report is failed until the operator redelivers it, with the same delivery id and body.`,
      ].join('\n\n'),
      security: [],
      parameters: [
        {
          name: 'X-Gateway-Signature',
          in: 'header',
          required: true,
          description: 'Lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the API key that sent the message',
          schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          example: '5d0f2a6c8e1b4d7f9a3c5e7b1d9f2a4c6e8b0d2f4a6c8e1b3d5f7a9c1e3b5d7f',
        },
        {
          name: 'X-Gateway-Delivery-Id',
          in: 'header',
          required: true,
          description: 'Stable for the report across all its attempts and redeliveries',
          schema: { type: 'string' },
          example: EXAMPLE.deliveryId,
        },
        {
          name: 'X-Gateway-Attempt',
          in: 'header',
          required: true,
          description: 'The attempt number, from 1; it goes on counting after a redelivery',
          schema: { type: 'integer', minimum: 1 },
          example: 1,
        },
        {
          name: 'User-Agent',
          in: 'header',
          required: true,
          description: 'The gateway\'s webhook sender',
          schema: { type: 'string' },
          example: 'TMS-Webhooks/1',
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/DeliveryReport' },
            examples: {
              delivered: {
                summary: 'Order confirmation delivered',
                value: EXAMPLE_DELIVERY_REPORT,
              },
              rsa: {
                summary: 'An RSA message, sent without a tracking_id',
                value: {
                  message_id: EXAMPLE.secondMessageId,
                  client_req_id: EXAMPLE.secondMessageId,
                  from: EXAMPLE.oaId,
                  to: null,
                  status: 'SUCCESS',
                  delivered_at: EXAMPLE.deliveredAt,
                  tracking_id: 'c71e0fdd8432db4f237f',
                },
              },
            },
          },
        },
      },
      responses: {
        '2XX': { description: `Received: any 2xx within ${timeout} acknowledges the report; the body is ignored.` },
        '4XX': { description: 'Refused (for example 401 for a signature that does not match): a failed attempt, retried like a 5xx, a timeout or a connection error.' },
      },
    },
  };
}

/** The webhooks of the public document, and the component their body refers to. */
export function addDeliveryReportWebhook(document: OpenApiDocument, rules: WebhookRules): void {
  document.webhooks = { deliveryReport: deliveryReportOperation(rules) };
  document.components.schemas = { ...document.components.schemas, DeliveryReport: DELIVERY_REPORT_SCHEMA };
}
