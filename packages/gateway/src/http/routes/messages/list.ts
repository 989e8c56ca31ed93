import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';
import { listMessages } from '../../../services/messages.ts';
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
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Records skipped, newest first' })),
  },
  { additionalProperties: false },
);

export function registerListMessages(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/messages',
    {
      schema: {
        tags: ['messages'],
        summary: 'List messages, newest first',
        description: 'Scope messages:read. Use status=failed with from to find failures, which have no webhook.',
        querystring: ListQuery,
        response: {
          200: Type.Object({
            messages: Type.Array(MessageRecord),
            limit: Type.Integer(),
            offset: Type.Integer(),
            count: Type.Integer({ description: 'Records in this page' }),
            has_more: Type.Boolean(),
          }),
          ...errorResponses(400, 401, 403, 429),
        },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:read'),
    },
    async (request) => listMessages({ ctx: contextOf(request, route.deps), query: request.query }),
  );
}
