import { Type } from 'typebox';
import { getWebhookDelivery, listWebhookDeliveries, redeliverFailedWebhooks, redeliverWebhook } from '../../../services/webhook-deliveries.ts';
import { presentDeliveryList, presentDeliveryWithLog, presentFailedRedelivery } from '../../presenters/webhook-deliveries.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { DELIVERED_WEBHOOK, REDELIVERED_WEBHOOK_DETAIL, WEBHOOK_DELIVERY, WEBHOOK_DELIVERY_DETAIL } from '../../openapi/operator-examples.ts';
import { MAX_INT32, MAX_OPERATOR_PAGE_SIZE } from '../../../lib/limits.ts';
import { WebhookDeliveryDetailSchema, WebhookDeliverySchema, WebhookDeliveryStatusSchema } from './admin-schemas.ts';

const tags = ['Webhook deliveries'];
const DELIVERY_ERRORS = ['webhook_delivery_not_found', ...PATH_PARAMETER_ERRORS, ...OPERATOR_ERRORS] as const;
const DeliveryIdParams = Type.Object({ id: Type.String({ description: 'The delivery id (dlv_…)' }) });
const IsoTime = (description: string) => Type.String({ minLength: 1, maxLength: 64, description: `${description}: ISO 8601 (no offset: Vietnam time)` });

/** Delivery-report webhooks: the outbox, each delivery's attempt log, and redelivery. */
export function registerAdminWebhookDeliveries(app: App, route: RouteDependencies): void {
  app.get(
    '/admin/v1/webhook-deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'List delivery-report webhooks, newest first',
        querystring: Type.Object(
          {
            workspace_id: Type.Optional(Type.String()),
            status: Type.Optional(WebhookDeliveryStatusSchema),
            since: Type.Optional(IsoTime('Created at or after')),
            until: Type.Optional(IsoTime('Created before')),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OPERATOR_PAGE_SIZE })),
            offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ deliveries: Type.Array(WebhookDeliverySchema), count: Type.Integer() }) },
        'x-parameter-examples': { workspace_id: EXAMPLE.workspaceId, status: 'failed', since: '2026-11-24T00:00:00+07:00', until: '2026-11-25T00:00:00+07:00', limit: 50, offset: 0 },
        'x-responses': {
          200: {
            description: 'One page of delivery reports, newest first.',
            examples: { page: { summary: 'A failed report and a delivered one', value: { deliveries: [DELIVERED_WEBHOOK, WEBHOOK_DELIVERY], count: 2 } } },
          },
        },
        'x-error-types': ['invalid_request', 'invalid_date_range', ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentDeliveryList(await listWebhookDeliveries({ ctx: operatorContextOf(request, route), input: request.query })),
  );
  app.post(
    '/admin/v1/webhook-deliveries/redeliver-failed',
    {
      schema: {
        tags,
        operationId: 'redeliverFailedWebhooks',
        summary: 'Redeliver every delivery that failed at or after a time (to its key’s current URL)',
        body: Type.Object({ failed_since: IsoTime('Failed at or after'), workspace_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            redelivered: Type.Integer(),
            skipped: Type.Integer({ description: 'Failed deliveries left failed: their key is revoked or has no webhook URL' }),
            failed_since: Type.String(),
          }),
        },
        'x-request-examples': {
          outage: { summary: "After the shop's outage on the morning of 24 November", value: { failed_since: '2026-11-24T08:00:00+07:00', workspace_id: EXAMPLE.workspaceId } },
        },
        'x-responses': {
          200: {
            description: 'How many failed reports are pending again, and how many were left failed.',
            examples: { redelivered: { summary: 'Redelivered', value: { redelivered: 37, skipped: 1, failed_since: '2026-11-24T01:00:00.000Z' } } },
          },
        },
        'x-error-types': [...JSON_BODY_ERRORS, 'invalid_date_range', ...OPERATOR_ERRORS],
      },
    },
    async (request) => presentFailedRedelivery(await redeliverFailedWebhooks({ ctx: operatorContextOf(request, route), input: request.body })),
  );
  app.get(
    '/admin/v1/webhook-deliveries/:id',
    {
      schema: {
        tags,
        operationId: 'getWebhookDelivery',
        summary: 'Read one delivery: its body and attempt log',
        params: DeliveryIdParams,
        response: { 200: WebhookDeliveryDetailSchema },
        'x-parameter-examples': { id: EXAMPLE.deliveryId },
        'x-responses': {
          200: { description: 'The report, the exact body it sends, and every attempt.', examples: { failed: { summary: 'Failed after the whole retry ladder', value: WEBHOOK_DELIVERY_DETAIL } } },
        },
        'x-error-types': DELIVERY_ERRORS,
      },
    },
    async (request) => presentDeliveryWithLog(await getWebhookDelivery({ ctx: operatorContextOf(request, route), input: { id: request.params.id } })),
  );
  app.post(
    '/admin/v1/webhook-deliveries/:id/redeliver',
    {
      schema: {
        tags,
        operationId: 'redeliverWebhook',
        summary: 'Send one delivery again (same id and body, the retry ladder from the start, the key’s current URL)',
        params: DeliveryIdParams,
        response: { 200: WebhookDeliveryDetailSchema },
        'x-parameter-examples': { id: EXAMPLE.deliveryId },
        'x-responses': { 200: { description: 'The report, pending again.', examples: { pending: { summary: 'Pending again', value: REDELIVERED_WEBHOOK_DETAIL } } } },
        'x-error-types': ['webhook_delivery_pending', 'webhook_delivery_not_redeliverable', ...DELIVERY_ERRORS],
      },
    },
    async (request) => presentDeliveryWithLog(await redeliverWebhook({ ctx: operatorContextOf(request, route), input: { id: request.params.id } })),
  );
}
