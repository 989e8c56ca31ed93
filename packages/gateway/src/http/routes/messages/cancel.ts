import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, idempotencyOf, sendIdempotent, type App, type RouteDependencies } from '../../route-support.ts';
import { API_KEY_ERRORS, IDEMPOTENCY_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { cancelMessage } from '../../../services/messages.ts';

export function registerCancelMessage(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/:id/cancel',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'cancelMessage',
        summary: 'Cancel a queued message',
        description: 'Scope `messages:send`. Only queued messages (a scheduled one, or one the dispatcher has not taken yet): the record is deleted and its price refunded. Any other state is 409.',
        params: Type.Object({ id: Type.String({ description: 'The msg_id' }) }),
        'x-parameter-examples': { id: EXAMPLE.messageId },
        response: { 200: Type.Object({ cancelled: Type.Literal(true), msg_id: Type.String() }) },
        'x-responses': {
          200: {
            description: 'Cancelled: the message is deleted and its price is back in the wallet.',
            examples: { cancelled: { summary: 'Cancelled', value: { cancelled: true, msg_id: EXAMPLE.messageId } } },
          },
        },
        'x-error-types': ['message_not_found', 'message_not_queued', ...PATH_PARAMETER_ERRORS, ...IDEMPOTENCY_ERRORS, ...API_KEY_ERRORS],
      },
      onRequest: requireScope(route, 'messages:send'),
    },
    async (request, reply) => {
      const outcome = await cancelMessage({ ctx: apiContextOf(request, route), input: { id: request.params.id, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 200, outcome, { cancelled: true as const, msg_id: outcome.result.messageId });
    },
  );
}
