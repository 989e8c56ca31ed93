import { Type } from 'typebox';
import { getMessageHistory } from '../../../services/console/message-history.ts';
import { cancelFromConsole } from '../../../services/console/sending.ts';
import { listMessages } from '../../../services/messages.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { IDEMPOTENCY_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { presentMessageHistory } from '../../presenters/console-messages.ts';
import { presentMessagePage } from '../../presenters/messages.ts';
import { consoleContextOf, idempotencyOf, sendIdempotent, type App, type RouteDependencies } from '../../route-support.ts';
import { DateTime, Nullable } from '../../schemas.ts';
import { ListMessagesQuery, MessagePageSchema, MessageRecord } from '../messages/shared-schemas.ts';
import { CONSOLE_CHANGE_ERRORS, CONSOLE_READ_ERRORS, ConsoleDeliveryDetailSchema } from './access-schemas.ts';

const MessageIdParams = Type.Object({ id: Type.String({ description: 'The msg_id' }) });

export const TimelineEventSchema = Type.Object({
  event: Type.Union([Type.Literal('created'), Type.Literal('scheduled'), Type.Literal('sent'), Type.Literal('delivered'), Type.Literal('failed')]),
  at: DateTime,
  error_code: Type.Optional(Nullable(Type.Integer({ description: "Only on failed: the platform's code, or a negative one of the gateway's" }))),
  error_message: Type.Optional(Nullable(Type.String({ description: 'Only on failed: the English explanation' }))),
  error_reason: Type.Optional(Nullable(Type.String({ description: 'Only on failed: the Vietnamese explanation' }))),
});

export const MessageHistorySchema = Type.Object({
  message: MessageRecord,
  timeline: Type.Array(TimelineEventSchema, { description: 'What happened to the message, in order' }),
  reports: Type.Array(ConsoleDeliveryDetailSchema, { description: 'The delivery reports sent for it (none when it was sent without a webhook), with their attempts' }),
});

export function registerConsoleMessages(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/messages',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleListMessages',
        summary: 'List messages, newest first (the filters of GET /api/v1/messages)',
        querystring: ListMessagesQuery,
        response: { 200: MessagePageSchema },
        'x-error-types': ['invalid_request', 'invalid_date_range', ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentMessagePage(await listMessages({ ctx: consoleContextOf(request, route), input: request.query })),
  );

  app.get(
    '/console/api/messages/:id',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleGetMessage',
        summary: 'One message with its timeline and its delivery reports',
        params: MessageIdParams,
        response: { 200: MessageHistorySchema },
        'x-error-types': ['message_not_found', ...PATH_PARAMETER_ERRORS, ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentMessageHistory(await getMessageHistory({ ctx: consoleContextOf(request, route), input: { id: request.params.id } })),
  );

  app.post(
    '/console/api/messages/:id/cancel',
    {
      schema: {
        tags: ['Console'],
        operationId: 'consoleCancelMessage',
        summary: 'Cancel a queued message (deleted and refunded)',
        params: MessageIdParams,
        response: { 200: Type.Object({ cancelled: Type.Literal(true), msg_id: Type.String() }) },
        'x-error-types': ['message_not_found', 'message_not_queued', ...PATH_PARAMETER_ERRORS, ...IDEMPOTENCY_ERRORS, ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request, reply) => {
      const outcome = await cancelFromConsole({ ctx: consoleContextOf(request, route), input: { id: request.params.id, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 200, outcome, { cancelled: true as const, msg_id: outcome.result.messageId });
    },
  );
}
