import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, idempotencyOf, sendServiceResponse, type App, type RouteDependencies } from '../../route-support.ts';
import { DateTime, Nullable, TemplateData, TrackingId, errorResponses } from '../../schemas.ts';
import { sendMessage } from '../../../services/send-messages.ts';
import { SendAt, SendMode } from './shared-schemas.ts';

const SendBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1 }),
    phone: Type.String({ minLength: 1, description: 'Local (0…), +84… or 84… form; normalised to 84…, not validated' }),
    template_data: Type.Optional(TemplateData),
    tracking_id: Type.Optional(TrackingId),
    send_at: Type.Optional(SendAt),
    mode: Type.Optional(SendMode),
  },
  { additionalProperties: false },
);

export function registerSendMessage(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/send',
    {
      schema: {
        tags: ['messages'],
        summary: 'Send one template message',
        description: 'Scope messages:send. 202 means queued, not delivered. Charged at the template price in the same transaction that queues it.',
        body: SendBody,
        response: {
          202: Type.Object({ msg_id: Type.String(), tracking_id: Type.String(), status: Type.Literal('queued'), scheduled_at: Nullable(DateTime) }),
          ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 422, 429),
        },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:send'),
    },
    async (request, reply) =>
      sendServiceResponse(reply, await sendMessage({ ctx: contextOf(request, route.deps), body: request.body, idempotency: idempotencyOf(request) })),
  );
}
