import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { contextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable, errorResponses } from '../../schemas.ts';
import { readQuota } from '../../../services/catalog.ts';

export function registerGetQuota(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/quota',
    {
      schema: {
        tags: ['catalog'],
        summary: 'Daily quota per sender account',
        description: 'Scope messages:read. Quotas reset at midnight Vietnam time; a failure for one account is reported in its entry.',
        querystring: Type.Object({ oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            quotas: Type.Array(
              Type.Object({
                oa_id: Type.String(),
                oa_name: Type.String(),
                daily_quota: Type.Integer(),
                remaining: Type.Integer(),
                used: Type.Integer(),
                reset_at: Type.String({ description: 'Next midnight, Vietnam time, e.g. 2026-11-22T00:00:00.000+07:00' }),
                error: Nullable(Type.String()),
              }),
            ),
            count: Type.Integer(),
          }),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
      preHandler: requireScope(route.authenticator, route.limiter, 'messages:read'),
    },
    async (request) => readQuota({ ctx: contextOf(request, route.deps), query: request.query }),
  );
}
