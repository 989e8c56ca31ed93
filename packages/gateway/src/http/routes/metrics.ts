import { requireOperator } from '../plugins/guards.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../route-support.ts';
import { renderMetrics } from '../../services/health.ts';
import { OPERATOR_ERRORS } from '../openapi/common-errors.ts';

/** GET /metrics: Prometheus text format, behind the operator token (queue and error figures are operational data). */
export function registerMetrics(app: App, route: RouteDependencies): void {
  const schema = {
    tags: ['Operations'],
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description: 'Prometheus text exposition format (version 0.0.4): request, queue, dispatch, webhook and store figures of this process. Behind the operator token.',
    'x-responses': {
      200: {
        description: 'The metrics of this process.',
        mediaType: 'text/plain',
        examples: {
          metrics: {
            summary: 'An excerpt',
            value: [
              '# HELP tms_messages_accepted_total Messages accepted (202) by this process',
              '# TYPE tms_messages_accepted_total counter',
              'tms_messages_accepted_total{path="send"} 1520',
              'tms_messages_accepted_total{path="batch"} 48210',
              '',
            ].join('\n'),
          },
        },
      },
    },
    'x-error-types': OPERATOR_ERRORS,
  };
  app.get('/metrics', { schema, onRequest: requireOperator(route) }, async (request, reply) => {
    const { contentType, body } = await renderMetrics({ ctx: operatorContextOf(request, route), input: {} });
    return reply.type(contentType).send(body);
  });
}
