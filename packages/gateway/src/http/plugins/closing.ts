import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.ts';

/**
 * Graceful close: once the server starts closing, requests already running finish and their
 * answers carry Connection: close (so keep-alive clients let go at once instead of after the idle
 * timeout), and new requests on open connections get 503 in the contract's error shape.
 */
export function registerClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) return sendError(reply, 'service_unavailable', 'the gateway is shutting down; retry the request');
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}
