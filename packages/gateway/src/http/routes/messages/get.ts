import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';
import { getMessage } from '../../../services/messages.ts';
import { MessageRecord } from './shared-schemas.ts';

export function registerGetMessage(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/messages/:id',
    {
      schema: {
        tags: ['messages'],
        summary: 'Look up one message',
        description: "Scope messages:read. 404 when the message is not in the key's workspace (or was cancelled).",
        params: Type.Object({ id: Type.String() }),
        response: { 200: MessageRecord, ...errorResponses(401, 403, 404, 429) },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:read'),
    },
    async (request) => getMessage({ ctx: contextOf(request, route.deps), id: request.params.id }),
  );
}
