import type { FastifyInstance } from 'fastify';

/** Where answered requests are counted (infrastructure/http-metrics.ts, reached through the process's parts). */
export interface RequestObserver {
  observe(request: { method: string; route: string | null; statusCode: number; seconds: number }): void;
}

/**
 * Counts and times every answered request by its route's pattern (`/api/v1/messages/:id`), never
 * its URL, so an unknown path (a 404, a scanner's guesses) adds no series of its own.
 */
export function registerRequestMetrics(app: FastifyInstance, observer: RequestObserver): void {
  app.addHook('onResponse', async (request, reply) => {
    observer.observe({
      method: request.method,
      route: request.is404 ? null : (request.routeOptions.url ?? null),
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
}
