import { requireScope } from '../../plugins/guards.ts';
import { apiContextOf, idempotencyOf, sendIdempotent, type App, type RouteDependencies } from '../../route-support.ts';
import { presentAcceptedRecipients } from '../../presenters/messages.ts';
import { ACCEPTANCE_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { sendBatch } from '../../../services/send-messages.ts';
import { BatchBody, BatchResponse } from './shared-schemas.ts';

export function registerSendBatch(app: App, route: RouteDependencies): void {
  app.post(
    '/api/v1/messages/batch',
    {
      schema: {
        tags: ['Messages'],
        operationId: 'sendBatch',
        summary: 'Send one template to up to 500 recipients',
        description:
          'Scope `messages:send`. The wallet must cover every recipient that can be queued, or the answer is 402 and nothing is queued. Recipients past the sender account daily quota get `daily_quota_exceeded`; a recipient without a phone or with wrong `template_data` gets its own error and the others are still queued.',
        body: BatchBody,
        response: { 202: BatchResponse },
        'x-request-examples': {
          orders: {
            summary: 'Three order confirmations, one without its order code',
            value: {
              template_id: EXAMPLE.orderTemplateId,
              recipients: [
                { phone: EXAMPLE.phoneLocal, template_data: EXAMPLE.orderData, tracking_id: EXAMPLE.trackingId },
                { phone: EXAMPLE.secondPhoneLocal, template_data: EXAMPLE.secondOrderData, tracking_id: 'DH-20261124-002' },
                { phone: '0903123456', template_data: { customer_name: 'Lê Văn Cường', amount: '215.000đ' }, tracking_id: 'DH-20261124-003' },
              ],
            },
          },
        },
        'x-responses': {
          202: {
            description: 'Accepted: `accepted` recipients are queued and charged; the others carry their error, in request order.',
            examples: {
              partly: {
                summary: 'Two queued, one refused',
                value: {
                  accepted: 2,
                  total: 3,
                  scheduled_at: null,
                  results: [
                    { phone: EXAMPLE.phone, msg_id: EXAMPLE.messageId, tracking_id: EXAMPLE.trackingId, status: 'queued' },
                    { phone: EXAMPLE.secondPhone, msg_id: EXAMPLE.secondMessageId, tracking_id: 'DH-20261124-002', status: 'queued' },
                    { phone: '84903123456', tracking_id: 'DH-20261124-003', status: 'error', error: 'invalid_template_data: missing required parameter "order_code"' },
                  ],
                },
              },
            },
          },
        },
        'x-error-types': [
          ...ACCEPTANCE_ERRORS,
        ],
      },
      onRequest: requireScope(route, 'messages:send'),
    },
    async (request, reply) => {
      const outcome = await sendBatch({ ctx: apiContextOf(request, route), input: { ...request.body, idempotency: idempotencyOf(request) } });
      return sendIdempotent(reply, 202, outcome, presentAcceptedRecipients(outcome.result));
    },
  );
}
