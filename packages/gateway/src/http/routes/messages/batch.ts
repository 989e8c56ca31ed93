import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, idempotencyOf, sendServiceResponse, type App, type RouteDependencies } from '../../route-support.ts';
import { TemplateData, TrackingId, errorResponses } from '../../schemas.ts';
import { sendBatch } from '../../../services/send-messages.ts';
import { BatchResponse, SendAt, SendMode } from './shared-schemas.ts';

const BatchBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1 }),
    recipients: Type.Array(
      Type.Object(
        {
          phone: Type.Optional(Type.String({ description: 'Required; a recipient without one gets missing_phone' })),
          template_data: Type.Optional(TemplateData),
          tracking_id: Type.Optional(TrackingId),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500, description: '1 to 500 recipients; 100 to 200 per request is advised' },
    ),
    send_at: Type.Optional(SendAt),
    mode: Type.Optional(SendMode),
  },
  { additionalProperties: false },
);

export function registerSendBatch(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/batch',
    {
      schema: {
        tags: ['messages'],
        summary: 'Send one template to up to 500 recipients',
        description:
          'Scope messages:send. The wallet must cover every recipient that can be queued, or the answer is 402 and nothing is queued. Recipients past the sender account daily quota get daily_quota_exceeded.',
        body: BatchBody,
        response: { 202: BatchResponse, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 422, 429) },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:send'),
    },
    async (request, reply) =>
      sendServiceResponse(reply, await sendBatch({ ctx: contextOf(request, route.deps), body: request.body, idempotency: idempotencyOf(request) })),
  );
}
