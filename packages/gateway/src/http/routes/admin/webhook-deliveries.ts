import { Type } from 'typebox';
import { getWebhookDelivery, listWebhookDeliveries, redeliverFailedWebhooks, redeliverWebhook } from '../../../services/webhook-deliveries.ts';
import type { App, RouteDependencies } from '../../route-support.ts';
import { errorResponses } from '../../schemas.ts';
import { WebhookDeliveryDetailSchema, WebhookDeliverySchema, WebhookDeliveryStatusSchema } from './admin-schemas.ts';

const tags = ['operator'];
const DeliveryIdParams = Type.Object({ id: Type.String({ description: 'The delivery id (dlv_…)' }) });
const IsoTime = (description: string) => Type.String({ minLength: 1, maxLength: 64, description: `${description}: ISO 8601 (no offset: Vietnam time)` });

/** Delivery-report webhooks: the outbox, each delivery's attempt log, and redelivery. */
export function registerAdminWebhookDeliveries(app: App, route: RouteDependencies): void {
  const { admin } = route;
  app.get(
    '/admin/v1/webhook-deliveries',
    {
      schema: {
        tags,
        summary: 'List delivery-report webhooks, newest first',
        querystring: Type.Object(
          {
            workspace_id: Type.Optional(Type.String()),
            status: Type.Optional(WebhookDeliveryStatusSchema),
            since: Type.Optional(IsoTime('Created at or after')),
            until: Type.Optional(IsoTime('Created before')),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
            offset: Type.Optional(Type.Integer({ minimum: 0 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ deliveries: Type.Array(WebhookDeliverySchema), count: Type.Integer() }), ...errorResponses(400, 401) },
      },
    },
    async (request) => listWebhookDeliveries(admin, request.query),
  );
  app.post(
    '/admin/v1/webhook-deliveries/redeliver-failed',
    {
      schema: {
        tags,
        summary: 'Redeliver every delivery that failed at or after a time (to its key’s current URL)',
        body: Type.Object({ failed_since: IsoTime('Failed at or after'), workspace_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            redelivered: Type.Integer(),
            skipped: Type.Integer({ description: 'Failed deliveries left failed: their key is revoked or has no webhook URL' }),
            failed_since: Type.String(),
          }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request) => redeliverFailedWebhooks(admin, request.body),
  );
  app.get(
    '/admin/v1/webhook-deliveries/:id',
    {
      schema: { tags, summary: 'Read one delivery: its body and attempt log', params: DeliveryIdParams, response: { 200: WebhookDeliveryDetailSchema, ...errorResponses(401, 404) } },
    },
    async (request) => getWebhookDelivery(admin, request.params.id),
  );
  app.post(
    '/admin/v1/webhook-deliveries/:id/redeliver',
    {
      schema: {
        tags,
        summary: 'Send one delivery again (same id and body, the retry ladder from the start, the key’s current URL)',
        params: DeliveryIdParams,
        response: { 200: WebhookDeliveryDetailSchema, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => redeliverWebhook(admin, request.params.id),
  );
}
