import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, idempotencyOf, sendIdempotent, type App, type RouteDependencies } from '../../route-support.ts';
import { presentAcceptedSend } from '../../presenters/messages.ts';
import { ACCEPTANCE_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { sendMessage } from '../../../services/send-messages.ts';
import { SendBody, SendResponse } from './shared-schemas.ts';

export function registerSendMessage(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/send',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'sendMessage',
        summary: 'Send one template message',
        description: 'Scope `messages:send`. 202 means queued, not delivered. Charged at the template price in the same transaction that queues it.',
        body: SendBody,
        response: {
          202: SendResponse,
        },
        'x-request-examples': {
          order: {
            summary: 'Order confirmation, sent now',
            value: { template_id: EXAMPLE.orderTemplateId, phone: EXAMPLE.phoneLocal, template_data: EXAMPLE.orderData, tracking_id: EXAMPLE.trackingId },
          },
          scheduled: {
            summary: 'Scheduled for 9:00 Vietnam time, hashed phone',
            value: { template_id: EXAMPLE.orderTemplateId, phone: '+84 912 345 678', template_data: EXAMPLE.orderData, send_at: '2026-11-25T09:00:00+07:00', mode: 'hashphone' },
          },
          otp: { summary: 'One-time code, no tracking_id', value: { template_id: EXAMPLE.otpTemplateId, phone: EXAMPLE.phone, template_data: EXAMPLE.otpData } },
        },
        'x-responses': {
          202: {
            description: 'Queued and charged. The message is sent by the dispatcher; its status moves to sent, then delivered or failed.',
            examples: {
              queued: { summary: 'Queued to send now', value: { msg_id: EXAMPLE.messageId, tracking_id: EXAMPLE.trackingId, status: 'queued', scheduled_at: null } },
              scheduled: {
                summary: 'Queued for later (tracking_id defaults to the msg_id)',
                value: { msg_id: EXAMPLE.secondMessageId, tracking_id: EXAMPLE.secondMessageId, status: 'queued', scheduled_at: '2026-11-25T02:00:00.000Z' },
              },
            },
          },
        },
        'x-error-types': [
          ...ACCEPTANCE_ERRORS,
          // A single send's template_data and phone are checked whole; batch and RSA report them per recipient.
          'invalid_template_data',
          'missing_phone',
        ],
      },
      onRequest: requireScope(route, 'messages:send'),
    },
    async (request, reply) => {
      const outcome = await sendMessage({ ctx: apiContextOf(request, route), input: { ...request.body, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 202, outcome, presentAcceptedSend(outcome.result));
    },
  );
}
