import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's own X-Request-Id is kept when it is safe to log; otherwise we make one. */
export function generateRequestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  if (typeof given === 'string' && SAFE_REQUEST_ID.test(given)) return given;
  return `req_${randomBytes(12).toString('base64url')}`;
}

export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
