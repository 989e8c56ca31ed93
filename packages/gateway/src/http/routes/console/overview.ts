import { Type } from 'typebox';
import { DELIVERY_RATE_DAYS, readOverview } from '../../../services/console/overview.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { CONSOLE_READ_ERRORS } from './access-schemas.ts';
import { presentOverview } from '../../presenters/console-overview.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { MessageRecord } from '../messages/shared-schemas.ts';
import { QuotaViewSchema } from './sender-accounts.ts';

const Count = Type.Integer({ minimum: 0 });

export const OverviewSchema = Type.Object({
  balance: Type.Integer({ description: 'Wallet balance, VND' }),
  messages_today: Type.Object(
    { queued: Count, sending: Count, sent: Count, delivered: Count, failed: Count },
    { description: 'Messages created today (Vietnam time) by their status now' },
  ),
  delivery_rate: Type.Array(
    Type.Object({
      day: Type.String({ description: 'YYYY-MM-DD, Vietnam time' }),
      sent: Type.Integer({ description: 'Messages created that day that reached the platform and have no delivery report yet' }),
      delivered: Type.Integer({ description: 'Messages created that day that were delivered' }),
      failed: Type.Integer({ description: 'Messages created that day that failed' }),
      rate: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'delivered / (delivered + failed); null when neither' })),
    }),
    { minItems: DELIVERY_RATE_DAYS, maxItems: DELIVERY_RATE_DAYS, description: `The last ${DELIVERY_RATE_DAYS} Vietnam days, oldest first, today last` },
  ),
  quotas: Type.Array(QuotaViewSchema, { description: "Each sender account's quota today" }),
  latest_failures: Type.Array(MessageRecord, { description: 'The 10 newest failed messages, newest first' }),
});

export function registerConsoleOverview(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/overview',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleGetOverview',
        summary: "Balance, today's messages, the week's delivery rate, quotas and the latest failures",
        response: { 200: OverviewSchema },
        'x-error-types': [...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentOverview(await readOverview({ ctx: consoleContextOf(request, route), input: {} })),
  );
}
