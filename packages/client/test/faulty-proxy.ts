/**
 * A real HTTP proxy in front of the gateway that misbehaves on purpose, the way networks do:
 * it can forward a request (so the gateway really accepts it) and then destroy the connection
 * before the answer reaches the client, hold the answer past the client's timeout, or answer 503
 * or any scripted answer itself (an answer the gateway gives only under races, such as a conflict
 * with a request still in flight). Each request is decided by a plan, by method and path and attempt
 * number.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | 'forward' // pass through
  | 'drop-response' // forward, let the gateway answer, then destroy the client's socket
  | 'answer-503' // never reaches the gateway
  | { holdResponseMs: number } // forward, then keep the answer back this long
  | { answer: { status: number; body: unknown } }; // never reaches the gateway: this JSON answer instead

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  fault: Fault;
}

export interface FaultyProxy {
  url: string;
  /** Every request the proxy received, in order. */
  seen: SeenRequest[];
  /** Decides each request's fate; `attempt` counts requests with the same method and path, from 1. */
  plan: (request: { method: string; path: string; attempt: number }) => Fault;
  /** Forgets the requests seen and the attempt counts, and forwards everything again. */
  reset(): void;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function forward(target: URL, incoming: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, host: target.host } },
      (response) => {
        readBody(response).then((responseBody) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: responseBody }), reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export async function startFaultyProxy(targetUrl: string): Promise<FaultyProxy> {
  const target = new URL(targetUrl);
  const attempts = new Map<string, number>();
  const proxy: FaultyProxy = {
    url: '',
    seen: [],
    plan: () => 'forward',
    reset: () => {
      attempts.clear();
      proxy.seen.length = 0;
      proxy.plan = () => 'forward';
    },
    close: async () => {},
  };

  const server: Server = createServer((incoming, outgoing) => {
    void (async () => {
      const body = await readBody(incoming);
      const method = incoming.method ?? 'GET';
      const path = new URL(incoming.url ?? '/', 'http://proxy').pathname;
      const counter = `${method} ${path}`;
      const attempt = (attempts.get(counter) ?? 0) + 1;
      attempts.set(counter, attempt);
      const fault = proxy.plan({ method, path, attempt });
      proxy.seen.push({ method, path, headers: incoming.headers, body: body.toString('utf8'), fault });

      if (fault === 'answer-503') {
        outgoing.writeHead(503, { 'content-type': 'text/html' }).end('<html><body>503 Service Temporarily Unavailable</body></html>');
        return;
      }
      if (typeof fault === 'object' && 'answer' in fault) {
        outgoing.writeHead(fault.answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(fault.answer.body));
        return;
      }
      const answer = await forward(target, incoming, body);
      if (fault === 'drop-response') {
        // The gateway has committed and answered; the client never hears it.
        incoming.socket.destroy();
        return;
      }
      if (typeof fault === 'object' && 'holdResponseMs' in fault) await new Promise((resolve) => setTimeout(resolve, fault.holdResponseMs));
      if (incoming.socket.destroyed) return;
      const headers = { ...answer.headers };
      delete headers['transfer-encoding'];
      delete headers.connection;
      outgoing.writeHead(answer.status, headers).end(answer.body);
    })().catch(() => incoming.socket.destroy());
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
