import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { API_KEY_ERRORS } from '../../openapi/common-errors.ts';
import { MESSAGE_RECORDS } from '../../openapi/example-data.ts';
import { listMessages } from '../../../services/messages.ts';
import { presentMessagePage } from '../../presenters/messages.ts';
import { ListMessagesQuery, MessagePageSchema } from './shared-schemas.ts';

export function registerListMessages(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/messages',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'listMessages',
        summary: 'List messages, newest first',
        description: 'Scope `messages:read`. Use `status=failed` with `from` to find failures, which have no webhook.',
        querystring: ListMessagesQuery,
        response: { 200: MessagePageSchema },
        'x-parameter-examples': { status: 'failed', from: '2026-11-24T00:00:00+07:00', to: '2026-11-25T00:00:00+07:00', limit: 50, offset: 0 },
        'x-responses': {
          200: {
            description: 'One page of messages, newest first.',
            examples: {
              failures: {
                summary: "Today's failures (status=failed&from=2026-11-24T00:00:00+07:00)",
                value: { messages: [MESSAGE_RECORDS.failed], limit: 50, offset: 0, count: 1, has_more: false },
              },
              page: {
                summary: 'A page with more after it (limit=2)',
                value: { messages: [MESSAGE_RECORDS.scheduled, MESSAGE_RECORDS.delivered], limit: 2, offset: 0, count: 2, has_more: true },
              },
            },
          },
        },
        'x-error-types': ['invalid_request', 'invalid_date_range', ...API_KEY_ERRORS],
      },
      onRequest: requireScope(route, 'messages:read'),
    },
    async (request) => presentMessagePage(await listMessages({ ctx: apiContextOf(request, route), input: request.query })),
  );
}
