import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Headers on every answer: API answers carry per-customer data, so no cache (browser, proxy or CDN)
 * may keep them unless a route says otherwise (the reference's static assets do), and no browser
 * may guess a content type other than the one declared.
 */
export function applyResponseHeaders(reply: FastifyReply): void {
  reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
}

export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    applyResponseHeaders(reply);
  });
}
