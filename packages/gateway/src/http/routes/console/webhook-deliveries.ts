import { Type } from 'typebox';
import { MAX_INT32 } from '../../../lib/limits.ts';
import { getConsoleDelivery, listConsoleDeliveries, redeliverConsoleDelivery, redeliverConsoleFailures } from '../../../services/console/webhook-deliveries.ts';
import { requireConsoleRole } from '../../console/guards.ts';
import { JSON_BODY_ERRORS, PATH_PARAMETER_ERRORS } from '../../openapi/common-errors.ts';
import { EXAMPLE } from '../../openapi/example-data.ts';
import { REDELIVERED_WEBHOOK_DETAIL, WEBHOOK_DELIVERY, WEBHOOK_DELIVERY_DETAIL } from '../../openapi/operator-examples.ts';
import { presentConsoleDeliveryDetail, presentConsoleDeliveryPage } from '../../presenters/console-webhook-deliveries.ts';
import { presentFailedRedelivery } from '../../presenters/webhook-deliveries.ts';
import { consoleContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { CONSOLE_CHANGE_ERRORS, CONSOLE_READ_ERRORS, ConsoleDeliveryDetailSchema, ConsoleDeliverySchema, ConsoleDeliveryStatusSchema } from './access-schemas.ts';

const tags = ['Console'];
const DeliveryIdParams = Type.Object({ id: Type.String({ description: 'The delivery id (dlv_…)' }) });
const IsoTime = (description: string) => Type.String({ minLength: 1, maxLength: 64, description: `${description}: ISO 8601 (no offset: Vietnam time)` });
const DELIVERY_ERRORS = ['webhook_delivery_not_found', ...PATH_PARAMETER_ERRORS] as const;

/** The example records without the operator's workspace field, as the console shows them. */
function withoutWorkspace<T extends { workspace_id: string }>(record: T): Omit<T, 'workspace_id'> {
  const { workspace_id: _workspace, ...rest } = record;
  return rest;
}
const EXAMPLE_HEADERS = {
  'content-type': 'application/json',
  'x-gateway-signature': '5d0b4bd1f0b8f7b5c2f6e5d8a1b34c7f0b93c1f4a2d6e8b0c3f5a7d9e1b2c4d6',
  'x-gateway-delivery-id': EXAMPLE.deliveryId,
  'user-agent': 'TMS-Webhooks/1',
};

/** The signed-in workspace's delivery reports: list, read with body, headers and attempts, redeliver. */
export function registerConsoleWebhookDeliveries(app: App, route: RouteDependencies): void {
  app.get(
    '/console/api/webhook-deliveries',
    {
      schema: {
        tags,
        operationId: 'consoleListWebhookDeliveries',
        summary: 'Delivery reports of the workspace, newest first',
        querystring: Type.Object(
          {
            status: Type.Optional(ConsoleDeliveryStatusSchema),
            from: Type.Optional(IsoTime('Created at or after')),
            to: Type.Optional(IsoTime('Created before')),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
            offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT32 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ deliveries: Type.Array(ConsoleDeliverySchema), count: Type.Integer(), has_more: Type.Boolean() }) },
        'x-parameter-examples': { status: 'failed', from: '2026-11-24T00:00:00+07:00', to: '2026-11-25T00:00:00+07:00', limit: 50, offset: 0 },
        'x-responses': { 200: { description: 'One page of reports.', examples: { page: { summary: 'A failed report', value: { deliveries: [withoutWorkspace(WEBHOOK_DELIVERY)], count: 1, has_more: false } } } } },
        'x-error-types': ['invalid_request', 'invalid_date_range', ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentConsoleDeliveryPage(await listConsoleDeliveries({ ctx: consoleContextOf(request, route), input: request.query })),
  );

  app.post(
    '/console/api/webhook-deliveries/redeliver-failed',
    {
      schema: {
        tags,
        operationId: 'consoleRedeliverFailedWebhooks',
        summary: "Redeliver every report that failed at or after a time (to its key's current URL)",
        body: Type.Object({ failed_since: IsoTime('Failed at or after') }, { additionalProperties: false }),
        response: { 200: Type.Object({ redelivered: Type.Integer(), skipped: Type.Integer({ description: 'Failed reports left failed: their key is revoked or has no webhook URL' }), failed_since: Type.String() }) },
        'x-request-examples': { outage: { summary: "After the shop's outage on the morning of 24 November", value: { failed_since: '2026-11-24T08:00:00+07:00' } } },
        'x-responses': { 200: { description: 'How many are pending again, how many were left failed.', examples: { redelivered: { summary: 'Redelivered', value: { redelivered: 37, skipped: 1, failed_since: '2026-11-24T01:00:00.000Z' } } } } },
        'x-error-types': [...JSON_BODY_ERRORS, 'invalid_date_range', ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request) => presentFailedRedelivery(await redeliverConsoleFailures({ ctx: consoleContextOf(request, route), input: request.body })),
  );

  app.get(
    '/console/api/webhook-deliveries/:id',
    {
      schema: {
        tags,
        operationId: 'consoleGetWebhookDelivery',
        summary: 'One report: the exact body and headers it is sent with, and every attempt',
        params: DeliveryIdParams,
        response: { 200: ConsoleDeliveryDetailSchema },
        'x-parameter-examples': { id: EXAMPLE.deliveryId },
        'x-responses': { 200: { description: 'The report.', examples: { failed: { summary: 'Failed after the whole retry ladder', value: { ...withoutWorkspace(WEBHOOK_DELIVERY_DETAIL), headers: EXAMPLE_HEADERS } } } } },
        'x-error-types': [...DELIVERY_ERRORS, ...CONSOLE_READ_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'viewer'),
    },
    async (request) => presentConsoleDeliveryDetail(await getConsoleDelivery({ ctx: consoleContextOf(request, route), input: { id: request.params.id } })),
  );

  app.post(
    '/console/api/webhook-deliveries/:id/redeliver',
    {
      schema: {
        tags,
        operationId: 'consoleRedeliverWebhook',
        summary: "Send one report again (same id and body, the retry ladder from the start, the key's current URL)",
        params: DeliveryIdParams,
        response: { 200: ConsoleDeliveryDetailSchema },
        'x-parameter-examples': { id: EXAMPLE.deliveryId },
        'x-responses': { 200: { description: 'The report, pending again.', examples: { pending: { summary: 'Pending again', value: { ...withoutWorkspace(REDELIVERED_WEBHOOK_DETAIL), headers: EXAMPLE_HEADERS } } } } },
        'x-error-types': ['webhook_delivery_pending', 'webhook_delivery_not_redeliverable', ...DELIVERY_ERRORS, ...CONSOLE_CHANGE_ERRORS],
      },
      onRequest: requireConsoleRole(route, 'developer'),
    },
    async (request) => presentConsoleDeliveryDetail(await redeliverConsoleDelivery({ ctx: consoleContextOf(request, route), input: { id: request.params.id } })),
  );
}
