import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, idempotencyOf, sendServiceResponse, type App, type RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';
import { cancelMessage } from '../../../services/messages.ts';

export function registerCancelMessage(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/:id/cancel',
    {
      schema: {
        tags: ['messages'],
        summary: 'Cancel a queued message',
        description: 'Scope messages:send. Only queued messages: the record is deleted and refunded. Any other state is 409.',
        params: Type.Object({ id: Type.String() }),
        response: { 200: Type.Object({ cancelled: Type.Literal(true), msg_id: Type.String() }), ...errorResponses(401, 403, 404, 409, 422, 429) },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:send'),
    },
    async (request, reply) =>
      sendServiceResponse(reply, await cancelMessage({ ctx: contextOf(request, route.deps), id: request.params.id, idempotency: idempotencyOf(request) })),
  );
}
