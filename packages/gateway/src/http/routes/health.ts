import { sql } from 'kysely';
import { Type } from 'typebox';
import type { App, RouteDependencies } from '../route-support.ts';
import { sendError } from '../plugins/errors.ts';

export function registerHealth(app: App, route: RouteDependencies): void {
  app.get(
    '/healthz',
    { schema: { tags: ['operations'], summary: 'Liveness: the process answers', response: { 200: Type.Object({ status: Type.String() }) } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    { schema: { tags: ['operations'], summary: 'Readiness: the store answers', response: { 200: Type.Object({ status: Type.String(), store: Type.String() }) } } },
    async (request, reply) => {
      try {
        await sql`SELECT 1`.execute(route.deps.store.db);
        return { status: 'ready', store: route.deps.store.dialect };
      } catch (error) {
        request.log.warn({ err: error }, 'store not reachable');
        return sendError(reply, 'service_unavailable', 'store not reachable');
      }
    },
  );
}
