import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ErrorType } from '../../services/errors.ts';
import { errorBody, sendError } from './errors.ts';
import { generateRequestId, newRequestId } from './request-id.ts';
import { applyResponseHeaders } from './response-headers.ts';

/**
 * Failures that Node.js and Fastify answer on their own, before any route or error handler runs,
 * brought into the contract's error body: a path that is not valid percent-encoding, an over-long
 * path parameter, an unparsable request, oversized headers, a missing Host, an unknown Expect.
 */

/** Longest path parameter the router accepts (ids are far shorter); longer is uri_too_long. */
export const MAX_PARAM_LENGTH = 100;

/** Fastify's `frameworkErrors`: failures found while routing, before hooks run. */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0];
  // Routing failed before the app's hooks exist for this request: set what onSend would.
  reply.header('x-request-id', request.id);
  applyResponseHeaders(reply);
  if (error.code === 'FST_ERR_BAD_URL') {
    sendError(reply, 'invalid_request', `the path ${path} is not valid percent-encoded UTF-8`);
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendError(reply, 'uri_too_long', `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`);
  } else {
    request.log.error({ err: error }, 'routing failed');
    sendError(reply, 'internal_error', 'internal error');
  }
}

interface ConnectionError extends Error {
  code?: string;
}

/** Which catalogued answer a connection-level parse failure gets (Node's own choice of status). */
function clientErrorOf(code: string | undefined): { type: ErrorType; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { type: 'headers_too_large', message: 'the request line and headers are larger than the server accepts' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { type: 'request_timeout', message: 'the request did not arrive in full in time' };
  return { type: 'invalid_request', message: 'the HTTP request is malformed' };
}

/** A whole HTTP response for a socket that has no request object to answer through. */
function rawErrorResponse(type: ErrorType, message: string, requestId: string): string {
  const content = errorBody(type, message);
  const body = JSON.stringify(content);
  const status = content.error.code;
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'x-content-type-options: nosniff',
    'cache-control: no-store',
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Fastify's `clientErrorHandler`: the HTTP parser failed (bad request line or header, headers too
 * large, request timeout), so there is no request; the answer is written to the socket directly.
 */
export function clientErrorAnswerer(log: Logger): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection has nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { type, message } = clientErrorOf(error.code);
    const requestId = newRequestId();
    log.debug({ err: error, request_id: requestId }, 'malformed request');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    // Closed once the answer is flushed: the parser cannot read anything more on this connection.
    socket.end(rawErrorResponse(type, message, requestId), () => socket.destroy());
  };
}

/**
 * Node answers `Expect: <anything but 100-continue>` with a bodiless 417 unless someone listens;
 * and with `requireHostHeader` off (see app.ts) a request without Host reaches us to be refused here.
 */
export function registerProtocolChecks(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const content = errorBody('expectation_failed', 'only the expectation 100-continue is supported');
    const body = JSON.stringify(content);
    response.writeHead(content.error.code, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': generateRequestId(request),
    });
    response.end(body);
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return sendError(reply, 'invalid_request', 'an HTTP/1.1 request needs a Host header');
    }
  });
}
