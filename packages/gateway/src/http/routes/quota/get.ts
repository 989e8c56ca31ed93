import { Type } from 'typebox';
import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { API_KEY_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { readQuota } from '../../../services/catalog.ts';
import { presentQuota } from '../../presenters/catalog.ts';

export const QuotaEntrySchema = Type.Object({
  oa_id: Type.String(),
  oa_name: Type.String(),
  daily_quota: Type.Integer({ description: "The platform's daily quota (the account's tier); the configured one when `error` is set" }),
  remaining: Type.Integer({ description: 'What can still be accepted today (never negative)' }),
  used: Type.Integer({ description: 'Used today: other senders on the account plus everything accepted here for today' }),
  reset_at: Type.String({ description: 'Next midnight, Vietnam time, e.g. 2026-11-22T00:00:00.000+07:00' }),
  error: Nullable(Type.String({ description: "Why the platform's figures could not be read for this account" })),
});

export function registerGetQuota(app: App, route: RouteDependencies): void {
  app.get(
    '/api/v1/quota',
    {
      schema: {
        tags: ['Catalog'],
        operationId: 'getQuota',
        summary: 'Daily quota per sender account',
        description: [
          "Scope `messages:read`. The figures are the platform's, read per sender account and cached for a short time (TMS_PLATFORM_QUOTA_CACHE_MS). Quotas reset at midnight Vietnam time.",
          "`remaining` is what a batch would still be granted today: the platform's remaining quota minus this service's messages for today that have not reached the platform yet. `used` is `daily_quota - remaining`: other senders' use of the account plus everything accepted here for today, queued or sent (single sends may take it past `daily_quota`; `remaining` is then 0).",
          "When the platform cannot be asked for one account (re-login needed, outage, timeout), that entry carries `error` and the configured daily quota minus this service's reservations; the other entries are unaffected and the response is still 200.",
        ].join('\n\n'),
        querystring: Type.Object({ oa_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            quotas: Type.Array(QuotaEntrySchema),
            count: Type.Integer(),
          }),
        },
        'x-parameter-examples': { oa_id: EXAMPLE.oaId },
        'x-responses': {
          200: {
            description: "Today's quota of each sender account (or of the one asked for).",
            examples: {
              quotas: {
                summary: 'Two accounts, one the platform could not be asked about',
                value: {
                  quotas: [
                    { oa_id: EXAMPLE.oaId, oa_name: EXAMPLE.oaName, daily_quota: 5000, remaining: 4212, used: 788, reset_at: '2026-11-25T00:00:00.000+07:00', error: null },
                    {
                      oa_id: '4318269720189301002',
                      oa_name: 'Hoa Sen Chi nhánh Đà Nẵng',
                      daily_quota: 2000,
                      remaining: 1950,
                      used: 50,
                      reset_at: '2026-11-25T00:00:00.000+07:00',
                      error: 'the platform did not answer the quota lookup within 2000 ms',
                    },
                  ],
                  count: 2,
                },
              },
            },
          },
        },
        'x-error-types': ['invalid_request', 'sender_account_not_found', ...API_KEY_ERRORS],
      },
      onRequest: requireScope(route, 'messages:read'),
    },
    async (request) => {
      const quotas = await readQuota({ ctx: apiContextOf(request, route), input: request.query });
      return { quotas: quotas.map(presentQuota), count: quotas.length };
    },
  );
}
