import { requireAdmin } from '../plugins/guards.ts';
import type { App, RouteDependencies } from '../route-support.ts';

/** GET /metrics: Prometheus text format, behind the operator token (queue and error figures are operational data). */
export function registerMetrics(app: App, route: RouteDependencies): void {
  const adminToken = route.deps.config.adminToken;
  if (!adminToken) throw new Error('/metrics needs an admin token');
  app.get('/metrics', { schema: { hide: true }, preHandler: requireAdmin(adminToken) }, async (_request, reply) => {
    const { contentType, body } = await route.deps.metrics.render();
    return reply.type(contentType).send(body);
  });
}
