import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sendError } from './errors.ts';

/**
 * How long after the close began a request may still be arriving (its headers or its body not yet
 * in full). Node stops enforcing its header and request timeouts once a server closes, so without
 * this one slow client would hold the stop until the process's deadline, which exits 1.
 */
export const ARRIVING_REQUEST_GRACE_MS = 5000;

/** What Node's own request timeout raises: the client error handler answers it 408 `request_timeout`. */
function requestTimeoutError(): Error {
  return Object.assign(new Error('the request did not arrive in full before the server closed'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
}

/**
 * Graceful close: once the server starts closing, requests already running finish and their
 * answers carry Connection: close (so keep-alive clients let go at once instead of after the idle
 * timeout), and new requests on open connections get 503 in the contract's error shape.
 * ARRIVING_REQUEST_GRACE_MS after the close began, the connections that are not being answered
 * are closed: a request whose body is still arriving gets 408 first (nothing of it was acted on),
 * a connection whose request line or headers are still arriving is closed without an answer.
 */
export function registerClosing(app: FastifyInstance): void {
  let closing = false;
  const connections = new Set<Socket>();
  /** Each connection's latest answer: a request reaches a handler only once its body is in full. */
  const answers = new WeakMap<Socket, ServerResponse>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const closeArrivingRequests = (): void => {
    let closed = 0;
    for (const socket of connections) {
      const answer = answers.get(socket);
      const beingAnswered = answer !== undefined && !answer.writableFinished;
      if (beingAnswered && answer.req.complete) continue;
      if (beingAnswered) app.server.emit('clientError', requestTimeoutError(), socket);
      else socket.destroy();
      closed += 1;
    }
    if (closed > 0) app.log.info({ connections: closed, grace_ms: ARRIVING_REQUEST_GRACE_MS }, 'closed the connections whose request was still arriving');
  };
  let grace: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    grace = setTimeout(closeArrivingRequests, ARRIVING_REQUEST_GRACE_MS).unref();
  });
  app.addHook('onClose', async () => clearTimeout(grace));
  app.addHook('onRequest', async (request, reply) => {
    answers.set(request.raw.socket, reply.raw);
    if (closing) return sendError(reply, 'service_unavailable', 'the gateway is shutting down; retry the request');
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}
