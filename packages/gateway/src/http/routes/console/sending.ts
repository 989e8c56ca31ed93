import { Type } from 'typebox';
import { MAX_CSV_BYTES, MAX_CSV_ROWS, previewCsvUpload } from '../../../services/console/csv-upload.ts';
import { sendBatchFromConsole, sendFromConsole } from '../../../services/console/sending.ts';
import type { ErrorType } from '../../../services/errors.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { ACCEPTANCE_PATH_ERRORS, JSON_BODY_ERRORS } from '../../openapi/common-errors.ts';
import { presentCsvPreview } from '../../presenters/console-messages.ts';
import { presentAcceptedRecipients, presentAcceptedSend } from '../../presenters/messages.ts';
import { consoleContextOf, idempotencyOf, sendIdempotent, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { BATCH_FIELDS, BatchResponse, SEND_FIELDS, SendResponse } from '../messages/shared-schemas.ts';
import { CONSOLE_CHANGE_ERRORS } from './access-schemas.ts';
import { QuotaViewSchema } from './sender-accounts.ts';

const ApiKeyChoice = Type.Optional(
  Type.String({ description: "An active API key of the workspace: the delivery reports go to its webhook. Without it the messages get no report." }),
);

const ConsoleSendBody = Type.Object({ ...SEND_FIELDS, api_key_id: ApiKeyChoice }, { additionalProperties: false });
const ConsoleBatchBody = Type.Object({ ...BATCH_FIELDS, api_key_id: ApiKeyChoice }, { additionalProperties: false });

/** A console send is refused whole for what refuses an /api/v1 send (but the API key checks), or an unknown report key. */
const CONSOLE_ACCEPTANCE_ERRORS = [...ACCEPTANCE_PATH_ERRORS, 'api_key_not_found', ...CONSOLE_CHANGE_ERRORS] as const satisfies readonly ErrorType[];

const CsvPreviewBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1 }),
    csv: Type.String({ description: `The file's text: UTF-8, at most ${MAX_CSV_BYTES / 1024 / 1024} MB and ${MAX_CSV_ROWS} rows; comma or semicolon separated; a header row` }),
  },
  { additionalProperties: false },
);

export const CsvPreviewSchema = Type.Object({
  template_id: Type.String(),
  columns: Type.Array(Type.String(), { description: "The header's columns, in file order" }),
  rows: Type.Array(
    Type.Object({
      row: Type.Integer({ description: 'Data row number, from 1 (the header is not counted)' }),
      phone: Type.String({ description: 'Normalised (84…) when it is a number, else as written' }),
      template_data: Type.Record(Type.String(), Type.String(), { description: 'The param columns of the row; empty cells are left out' }),
      tracking_id: Nullable(Type.String()),
      problem: Nullable(Type.String({ description: 'Why the row would not be sent; null when it would' })),
    }),
  ),
  valid_rows: Type.Integer(),
  invalid_rows: Type.Integer(),
  unit_price: Type.Integer({ description: 'VND per message' }),
  total_cost: Type.Integer({ description: 'valid_rows × unit_price, VND' }),
  balance: Type.Integer({ description: 'The wallet now, VND' }),
  quota: QuotaViewSchema,
});

/** A CSV of 5 MB grows in JSON (every quote and line break escaped), so the route takes more than the usual 1 MiB body. */
const CSV_PREVIEW_BODY_LIMIT = 3 * MAX_CSV_BYTES;

export function registerConsoleSending(app: App, route: RouteDependencies): void {
  app.post(
    '/console/api/messages/send',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleSendMessage',
        summary: 'Send one template message (source console)',
        description: 'Exactly POST /api/v1/messages/send, as the signed-in user: charged and queued in one transaction; Idempotency-Key replays.',
        body: ConsoleSendBody,
        response: { 202: SendResponse },
        'x-error-types': [...CONSOLE_ACCEPTANCE_ERRORS, 'invalid_template_data', 'missing_phone'],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request, reply) => {
      const outcome = await sendFromConsole({ ctx: consoleContextOf(request, route), input: { ...request.body, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 202, outcome, presentAcceptedSend(outcome.result));
    },
  );

  app.post(
    '/console/api/messages/batch',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleSendBatch',
        summary: 'Send one template to up to 500 recipients (source console)',
        description: 'Exactly POST /api/v1/messages/batch, as the signed-in user: the wallet covers every queued recipient or none; the daily quota applies per recipient.',
        body: ConsoleBatchBody,
        response: { 202: BatchResponse },
        'x-error-types': [...CONSOLE_ACCEPTANCE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request, reply) => {
      const outcome = await sendBatchFromConsole({ ctx: consoleContextOf(request, route), input: { ...request.body, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 202, outcome, presentAcceptedRecipients(outcome.result));
    },
  );

  app.post(
    '/console/api/messages/csv-preview',
    {
      bodyLimit: CSV_PREVIEW_BODY_LIMIT,
      schema: {
        tags: ['Console'],
        operationId: 'consolePreviewCsv',
        summary: 'Check a CSV of recipients before sending: per-row problems, cost, balance, quota',
        description:
          'Header row: `phone`, one column per template param (by name), optionally `tracking_id`; an unknown column or a missing required one is a 400 naming it. Rows are checked as a send checks them. Nothing is sent or charged.',
        body: CsvPreviewBody,
        response: { 200: CsvPreviewSchema },
        'x-error-types': [...JSON_BODY_ERRORS, 'template_not_found', 'template_not_enabled', ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request) => presentCsvPreview(await previewCsvUpload({ ctx: consoleContextOf(request, route), input: request.body })),
  );
}
