import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, idempotencyOf, sendServiceResponse, type App, type RouteDependencies } from '../../route-support.ts';
import { TemplateData, TrackingId, errorResponses } from '../../schemas.ts';
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
        tags: ['messages'],
        summary: 'Send to RSA-encrypted phone numbers',
        description: 'Scope messages:send. The service never stores the phone in the clear; results carry no phone.',
        body: RsaBody,
        response: { 202: BatchResponse, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 422, 429) },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:send'),
    },
    async (request, reply) =>
      sendServiceResponse(reply, await sendRsa({ ctx: contextOf(request, route.deps), body: request.body, idempotency: idempotencyOf(request) })),
  );
}
