import { sql } from 'kysely';
import { Type } from 'typebox';
import type { App, RouteDependencies } from '../route-support.ts';
import { sendError } from '../plugins/errors.ts';
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
    async (request, reply) => {
      try {
        await sql`SELECT 1`.execute(route.deps.store.db);
      } catch (error) {
        request.log.warn({ err: error }, 'store not reachable');
        return sendError(reply, 'service_unavailable', 'store not reachable');
      }
      // A worker loop of this process that stopped completing rounds (services/loop-health.ts):
      // the process answers, but the work it exists for does not move.
      const stalled = route.deps.metrics.loops.stalled(route.deps.clock());
      if (stalled.length > 0) {
        const described = stalled.map((loop) => `${loop.loop} (${Math.round(loop.ageMs / 1000)} s without a round, limit ${Math.round(loop.boundMs / 1000)} s)`);
        request.log.warn({ stalled }, 'worker loop stalled');
        return sendError(reply, 'service_unavailable', `worker loop stalled: ${described.join(', ')}`);
      }
      return { status: 'ready', store: route.deps.store.dialect };
    },
  );
}
