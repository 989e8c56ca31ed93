import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, idempotencyOf, sendIdempotent, type App, type RouteDependencies } from '../../route-support.ts';
import { presentAcceptedRecipients } from '../../presenters/messages.ts';
import { TemplateData, TrackingId } from '../../schemas.ts';
import { ACCEPTANCE_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { sendRsa } from '../../../services/send-messages.ts';
import { BatchResponse, SendAt } from './shared-schemas.ts';

const RsaBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1 }),
    recipients: Type.Array(
      Type.Object(
        {
          rsa_phone: Type.Optional(
            Type.String({ description: "Standard base64 of the RSA-OAEP ciphertext (SHA-256, MGF1 SHA-1) under the sender account's public key" }),
          ),
          template_data: Type.Optional(TemplateData),
          tracking_id: Type.Optional(TrackingId),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500 },
    ),
    send_at: Type.Optional(SendAt),
  },
  { additionalProperties: false },
);

export function registerSendRsa(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/rsa',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'sendRsa',
        summary: 'Send to RSA-encrypted phone numbers',
        description:
          "Scope `messages:send`. Each `rsa_phone` is the standard base64 of the number encrypted with the sender account's RSA public key (RSA-OAEP, SHA-256, MGF1 SHA-1). The service never stores the phone in the clear; results carry no phone. A recipient whose ciphertext is not usable gets `rsa_phone_invalid` and the others are still queued.",
        body: RsaBody,
        response: { 202: BatchResponse },
        'x-request-examples': {
          orders: {
            summary: 'Two encrypted numbers',
            value: {
              template_id: EXAMPLE.orderTemplateId,
              recipients: [
                { rsa_phone: EXAMPLE.rsaPhones[0], template_data: EXAMPLE.orderData, tracking_id: EXAMPLE.trackingId },
                { rsa_phone: EXAMPLE.rsaPhones[1], template_data: EXAMPLE.secondOrderData, tracking_id: 'DH-20261124-002' },
              ],
              send_at: '2026-11-25T09:00:00+07:00',
            },
          },
        },
        'x-responses': {
          202: {
            description: 'Accepted: `accepted` recipients are queued and charged; the others carry their error, in request order. No phone is echoed.',
            examples: {
              queued: {
                summary: 'Both queued for 9:00 Vietnam time',
                value: {
                  accepted: 2,
                  total: 2,
                  scheduled_at: '2026-11-25T02:00:00.000Z',
                  results: [
                    { msg_id: EXAMPLE.messageId, tracking_id: EXAMPLE.trackingId, status: 'queued' },
                    { msg_id: EXAMPLE.secondMessageId, tracking_id: 'DH-20261124-002', status: 'queued' },
                  ],
                },
              },
              quota: {
                summary: 'The daily quota ran out after the first',
                value: {
                  accepted: 1,
                  total: 2,
                  scheduled_at: null,
                  results: [
                    { msg_id: EXAMPLE.messageId, tracking_id: EXAMPLE.trackingId, status: 'queued' },
                    {
                      tracking_id: 'DH-20261124-002',
                      status: 'error',
                      error: 'daily_quota_exceeded: sender account 4318269720189301001 has no daily quota left for 2026-11-24 (daily quota 5000)',
                    },
                  ],
                },
              },
            },
          },
        },
        'x-error-types': [
          ...ACCEPTANCE_ERRORS,
        ],
      },
      onRequest: requireScope(route, 'messages:send'),
    },
    async (request, reply) => {
      const outcome = await sendRsa({ ctx: apiContextOf(request, route), input: { ...request.body, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 202, outcome, presentAcceptedRecipients(outcome.result));
    },
  );
}
