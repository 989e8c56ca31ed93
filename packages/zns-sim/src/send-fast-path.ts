/**
 * The send routes answered straight from node:http, ahead of Fastify. A send is the one request a client makes
 * per message, and Fastify's routing, body parsing, hooks and reply pipeline cost about as much as the send
 * itself. Only the plain case is taken here: a POST to a send path with a JSON body of known length within the
 * body limit, while no fault is set, durable sends are off and the server is not closing. Everything else goes
 * to Fastify (`fallback`), so every other answer (413, 503 while closing, form bodies, faults, a durable send's
 * 500) stays exactly Fastify's; the answers given here are byte for byte the ones Fastify gives.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Platform } from './platform/platform-state.ts';
import type { SendKind } from './platform/send.ts';

/** A request body that is not JSON, kept as text (answered -122, logged as sent). */
export class InvalidJson {
  constructor(readonly raw: string) {}
}

/** Parses a request body the way every JSON route of the simulator takes it. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return new InvalidJson(text);
  }
}

export interface SendRoute {
  path: string;
  kind: SendKind;
  /** The development-mode path: every send on it is a development send. */
  development: boolean;
}

/** What a send route does with the body's text: carries the send out, logs it and returns the JSON text to answer (see server.ts). */
export type SendRouteHandler = (route: SendRoute, headers: IncomingMessage['headers'], bodyText: string) => string;

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const PLAIN_JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

function isPlainJson(request: IncomingMessage, bodyLimit: number): boolean {
  const headers = request.headers;
  const type = headers['content-type'];
  if (type === undefined || headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  if (length === undefined || Number(length) > bodyLimit) return false;
  // Only the spellings clients use; any other (parameters Fastify might find invalid) is Fastify's to judge.
  return type === 'application/json' || PLAIN_JSON_TYPES.has(type.toLowerCase());
}

function reply(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': JSON_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function sendFastPath(input: {
  platform: Platform;
  routes: readonly SendRoute[];
  bodyLimit: number;
  isClosing: () => boolean;
  handle: SendRouteHandler;
  fallback: RequestListener;
}): RequestListener {
  const { platform, bodyLimit, isClosing, handle, fallback } = input;
  const routes = new Map(input.routes.map((route) => [route.path, route]));
  return (request, response) => {
    const route = request.method === 'POST' ? routes.get(request.url ?? '') : undefined;
    if (route === undefined || platform.faultsOn || platform.storeSend !== null || isClosing() || !isPlainJson(request, bodyLimit)) {
      fallback(request, response);
      return;
    }
    let first: Buffer | null = null;
    let more: Buffer[] | null = null;
    request.on('data', (chunk: Buffer) => {
      if (first === null) first = chunk;
      else (more ??= [first]).push(chunk);
    });
    // A client that goes away mid-body gets no answer, as from Fastify.
    request.on('error', () => undefined);
    request.on('end', () => {
      const raw = more !== null ? Buffer.concat(more) : first;
      let answer: string;
      try {
        answer = handle(route, request.headers, raw === null ? '' : raw.toString('utf8'));
      } catch (err) {
        reply(response, 500, JSON.stringify({ error: (err as Error).message }));
        return;
      }
      reply(response, 200, answer);
    });
  };
}
