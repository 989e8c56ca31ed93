import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { API_KEY_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE, MESSAGE_RECORDS } from '../../openapi/example-data.ts';
import { getMessage } from '../../../services/messages.ts';
import { MessageRecord } from './shared-schemas.ts';
import { presentMessage } from '../../presenters/messages.ts';

export function registerGetMessage(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/messages/:id',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'getMessage',
        summary: 'Look up one message',
        description: "Scope `messages:read`. 404 when the message is not in the key's workspace (or was cancelled).",
        params: Type.Object({ id: Type.String({ description: 'The msg_id' }) }),
        'x-parameter-examples': { id: EXAMPLE.messageId },
        response: { 200: MessageRecord },
        'x-responses': {
          200: {
            description: 'The message as it is now.',
            examples: {
              delivered: { summary: 'Delivered', value: MESSAGE_RECORDS.delivered },
              failed: { summary: 'Failed at the platform (refunded)', value: MESSAGE_RECORDS.failed },
            },
          },
        },
        'x-error-types': ['message_not_found', ...PATH_PARAMETER_ERRORS, ...API_KEY_ERRORS],
      },
      onRequest: requireScope(route, 'messages:read'),
    },
    async (request) => presentMessage(await getMessage({ ctx: apiContextOf(request, route), input: { id: request.params.id } })),
  );
}
