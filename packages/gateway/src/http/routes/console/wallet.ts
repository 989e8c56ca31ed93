import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { MAX_INT32 } from '../../../lib/limits.ts';
import { exportLedger, readWallet } from '../../../services/console/wallet.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { presentLedgerCsv, presentWalletPage } from '../../presenters/console-wallet.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { LedgerEntrySchema } from '../admin/admin-schemas.ts';
import { CONSOLE_READ_ERRORS } from './access-schemas.ts';

export const WalletSchema = Type.Object({
  balance: Type.Integer({ description: 'VND' }),
  ledger: Type.Array(LedgerEntrySchema, { description: 'Top-ups, charges, refunds and adjustments, newest first' }),
  has_more: Type.Boolean(),
});

export function registerConsoleWallet(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/wallet',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleGetWallet',
        summary: 'The balance and one page of the ledger',
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
            offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32, default: 0 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: WalletSchema },
        'x-error-types': ['invalid_request', ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentWalletPage(await readWallet({ ctx: consoleContextOf(request, route), input: request.query })),
  );

  app.get(
    '/console/api/wallet/ledger.csv',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleExportLedger',
        summary: 'The ledger as a CSV file (UTF-8 with BOM, Vietnam time), oldest first',
        querystring: Type.Object(
          {
            from: Type.Optional(Type.String({ description: 'Entries created at or after, ISO 8601 (Vietnam time without an offset)' })),
            to: Type.Optional(Type.String({ description: 'Entries created at or before' })),
          },
          { additionalProperties: false },
        ),
        'x-responses': {
          200: {
            description: 'Columns created_at, kind, amount, balance_after, message_count, reference, note; created_at in Vietnam time.',
            mediaType: 'text/csv',
            examples: {
              ledger: {
                summary: 'A top-up and a charge',
                value: '\uFEFFcreated_at,kind,amount,balance_after,message_count,reference,note\r\n2026-11-24 09:00:00,top_up,1000000,1000000,0,,Nạp tháng 11\r\n2026-11-24 10:15:02,charge,-300,999700,1,msg_01JD8Y6W3V5Q2N4M6K8H0G2F4D,\r\n',
              },
            },
          },
        },
        'x-error-types': ['invalid_request', 'invalid_date_range', ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request, reply) => {
      const ledger = await exportLedger({ ctx: consoleContextOf(request, route), input: request.query });
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="ledger-${ledger.workspaceId}.csv"`)
        .send(Readable.from(presentLedgerCsv(ledger.pages)));
    },
  );
}
