import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { API_KEY_ERRORS } from '../../openapi/common-errors.ts';
import { MESSAGE_RECORDS } from '../../openapi/example-data.ts';
import { MAX_INT32 } from '../../../lib/limits.ts';
import { listMessages } from '../../../services/messages.ts';
import { presentMessagePage } from '../../presenters/messages.ts';
import { MessageRecord, MessageStatusSchema } from './shared-schemas.ts';

const ListQuery = Type.Object(
  {
    tracking_id: Type.Optional(Type.String({ description: 'Exact match' })),
    phone: Type.Optional(Type.String({ description: 'Exact match on the normalised number; RSA messages cannot be found this way' })),
    status: Type.Optional(MessageStatusSchema),
    template_id: Type.Optional(Type.String()),
    oa_id: Type.Optional(Type.String()),
    from: Type.Optional(Type.String({ description: 'Lower bound on created_at, ISO 8601 (Vietnam time without an offset)' })),
    to: Type.Optional(Type.String({ description: 'Upper bound on created_at' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32, default: 0, description: 'Records skipped, newest first' })),
  },
  { additionalProperties: false },
);

export function registerListMessages(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/messages',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'listMessages',
        summary: 'List messages, newest first',
        description: 'Scope `messages:read`. Use `status=failed` with `from` to find failures, which have no webhook.',
        querystring: ListQuery,
        response: {
          200: Type.Object({
            messages: Type.Array(MessageRecord),
            limit: Type.Integer(),
            offset: Type.Integer(),
            count: Type.Integer({ description: 'Records in this page' }),
            has_more: Type.Boolean(),
          }),
        },
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
