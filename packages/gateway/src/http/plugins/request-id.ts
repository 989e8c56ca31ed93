import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Random per process, then a counter: unique across processes without random bytes per request. */
const PROCESS_PREFIX = `req_${randomBytes(6).toString('base64url')}`;
let counter = 0;

/** A caller's own X-Request-Id is kept when it is safe to log; otherwise we make one. */
export function generateRequestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  if (typeof given === 'string' && SAFE_REQUEST_ID.test(given)) return given;
  return newRequestId();
}

/** A fresh id, also for answers written before there is a request (malformed HTTP). */
export function newRequestId(): string {
  counter += 1;
  return `${PROCESS_PREFIX}${counter.toString(36)}`;
}

export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
