import { Type } from 'typebox';
import { requestLog, type App, type RouteDependencies } from '../route-support.ts';
import { checkReadiness } from '../../services/health.ts';
import { GATEWAY_FAILURES } from '../openapi/common-errors.ts';

/** Every route refuses an HTTP/1.1 request without Host (protocol-errors.ts); probes are the ones likely to forget it. */
const PROBE_ERROR_MESSAGES = { invalid_request: 'an HTTP/1.1 request needs a Host header' };

export function registerHealth(app: App, route: RouteDependencies): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'checkLiveness',
        summary: 'Liveness: the process answers',
        description: 'For liveness probes. No token: it tells only that the process answers HTTP.',
        security: [],
        response: { 200: Type.Object({ status: Type.String() }) },
        'x-responses': { 200: { description: 'The process is alive.', examples: { alive: { summary: 'Alive', value: { status: 'ok' } } } } },
        'x-error-types': ['invalid_request'],
        'x-error-messages': PROBE_ERROR_MESSAGES,
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'checkReadiness',
        summary: 'Readiness: the store answers',
        description: 'For readiness probes and load balancers. No token. 503 while the store cannot be reached, while a worker loop of this process has stopped completing rounds (tms start), or while the gateway is shutting down.',
        security: [],
        response: { 200: Type.Object({ status: Type.String(), store: Type.String() }) },
        'x-responses': {
          200: {
            description: 'Ready to serve: the store answered.',
            examples: { postgres: { summary: 'On PostgreSQL', value: { status: 'ready', store: 'postgres' } }, sqlite: { summary: 'On SQLite', value: { status: 'ready', store: 'sqlite' } } },
          },
        },
        'x-error-types': ['invalid_request', ...GATEWAY_FAILURES],
        'x-error-messages': PROBE_ERROR_MESSAGES,
      },
    },
    async (request) => {
      const readiness = await checkReadiness({ ctx: route.contextFor({ kind: 'anonymous' }, requestLog(request)), input: {} });
      return { status: 'ready', store: readiness.store };
    },
  );
}
