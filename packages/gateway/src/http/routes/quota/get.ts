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
        description: [
          "Scope messages:read. The figures are the platform's, read per sender account and cached for a short time (TMS_PLATFORM_QUOTA_CACHE_MS). Quotas reset at midnight Vietnam time.",
          "`remaining` is what a batch would still be granted today: the platform's remaining quota minus this service's messages for today that have not reached the platform yet. `used` is `daily_quota - remaining`: other senders' use of the account plus everything accepted here for today, queued or sent (single sends may take it past `daily_quota`; `remaining` is then 0).",
          "When the platform cannot be asked for one account (re-login needed, outage, timeout), that entry carries `error` and the configured daily quota minus this service's reservations; the other entries are unaffected and the response is still 200.",
        ].join('\n\n'),
        querystring: Type.Object({ oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            quotas: Type.Array(
              Type.Object({
                oa_id: Type.String(),
                oa_name: Type.String(),
                daily_quota: Type.Integer({ description: "The platform's daily quota (the account's tier); the configured one when `error` is set" }),
                remaining: Type.Integer({ description: 'What can still be accepted today (never negative)' }),
                used: Type.Integer({ description: 'Used today: other senders on the account plus everything accepted here for today' }),
                reset_at: Type.String({ description: 'Next midnight, Vietnam time, e.g. 2026-11-22T00:00:00.000+07:00' }),
                error: Nullable(Type.String({ description: "Why the platform's figures could not be read for this account" })),
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
