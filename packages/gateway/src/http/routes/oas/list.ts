import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';
import { listOas } from '../../../services/catalog.ts';

export function registerListOas(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/oas',
    {
      schema: {
        tags: ['catalog'],
        summary: 'List sender accounts (OAs)',
        description: 'Scope templates:read.',
        response: {
          200: Type.Object({ oas: Type.Array(Type.Object({ oa_id: Type.String(), name: Type.String() })), count: Type.Integer() }),
          ...errorResponses(401, 403, 429),
        },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'templates:read'),
    },
    async (request) => listOas({ ctx: contextOf(request, route.deps) }),
  );
}
