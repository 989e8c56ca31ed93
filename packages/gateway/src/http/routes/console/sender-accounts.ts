import { Type } from 'typebox';
import { listOas, readQuota } from '../../../services/catalog.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { CONSOLE_READ_ERRORS } from './access-schemas.ts';
import { presentConsoleSenderAccounts } from '../../presenters/console-catalog.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { DateTime, Nullable } from '../../schemas.ts';

export const QuotaViewSchema = Type.Object({
  oa_id: Type.String(),
  name: Type.String({ description: "The sender account's name" }),
  daily_quota: Type.Integer({ description: "Today's daily quota (the platform's, or the configured one when the platform cannot be asked)" }),
  used: Type.Integer({ description: 'Used today: other senders on the account plus everything accepted here for today' }),
  remaining: Type.Integer({ description: 'What can still be accepted today (never negative)' }),
  resets_at: DateTime,
});

export const ConsoleSenderAccountSchema = Type.Object({
  oa_id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('connected'), Type.Literal('disconnected'), Type.Literal('relogin_required')]),
  default_mode: Type.Union([Type.Literal('plain'), Type.Literal('hashphone')]),
  rsa_public_key: Nullable(Type.String({ description: 'PEM; encrypt phone numbers with it for POST /api/v1/messages/rsa' })),
  quota: QuotaViewSchema,
});

export function registerConsoleSenderAccounts(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/sender-accounts',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleListSenderAccounts',
        summary: "The workspace's sender accounts with their RSA public key and today's quota",
        response: { 200: Type.Object({ sender_accounts: Type.Array(ConsoleSenderAccountSchema) }) },
        'x-error-types': [...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => {
      const ctx = consoleContextOf(request, route);
      return presentConsoleSenderAccounts(await listOas({ ctx, input: {} }), await readQuota({ ctx, input: {} }));
    },
  );
}
