/**
 * The HTTP face of the simulator: one Fastify host serving the OAuth path, the ZNS business paths and the
 * /_control API. No request logging; faults are checked with one boolean on the hot path.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ControlError } from './control-error.ts';
import { registerControlRoutes } from './control.ts';
import { znsError } from './errors.ts';
import { FaultError, type FaultKind } from './faults.ts';
import type { OaState } from './platform/accounts.ts';
import { messageStatus } from './platform/message-status.ts';
import { authenticate, requestToken } from './platform/oauth.ts';
import type { Platform } from './platform/platform-state.ts';
import { quotaBody } from './platform/quota.ts';
import { generateOaRsaKey, getRsaKey } from './platform/rsa-keys.ts';
import { send, trackingIdOf, type SendResult } from './platform/send.ts';
import { InvalidJson, parseJsonText, sendFastPath, type SendRoute } from './send-fast-path.ts';
import { countFault } from './platform/stats.ts';
import { templateInfo, templateList } from './platform/templates.ts';

type RouteKind = 'send' | 'business' | 'oauth';

interface Answer {
  status?: number;
  body: object;
  send?: SendResult['meta'];
}

type Handler = (req: FastifyRequest) => Answer | Promise<Answer>;

/** A form-urlencoded body: what the OAuth endpoint takes; the business routes answer it -122 (they take JSON). */
export class FormBody {
  constructor(readonly fields: Record<string, string>) {}
}

function header(headers: IncomingMessage['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function businessBodyOf(body: unknown): unknown {
  return body instanceof InvalidJson || body instanceof FormBody ? null : body;
}

const BODY_LIMIT = 1_048_576;

const SEND_ROUTES: readonly SendRoute[] = [
  { path: '/message/template', kind: 'phone', development: false },
  { path: '/message/template/hashphone', kind: 'hash', development: false },
  { path: '/rsa/message/template', kind: 'rsa', development: false },
  // REDAI's paths (docs/zns-platform.md, low confidence) as cheap aliases.
  { path: '/message/template/hash_phone', kind: 'hash', development: false },
  { path: '/message/template/rsa', kind: 'rsa', development: false },
  { path: '/message/template/dev', kind: 'phone', development: true },
];

interface Pending {
  timer: NodeJS.Timeout;
  done: () => void;
}

export interface BuiltServer {
  app: FastifyInstance;
  /** Ends hung (timeout-fault) sockets and pending latency waits, so close() never waits for them. */
  abortPending(): void;
}

export function buildServer(platform: Platform): BuiltServer {
  let closing = false;
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: true,
    return503OnClosing: true,
    // Fastify's own server settings (keep-alive 72 s, no request timeout), with plain sends answered ahead of it.
    serverFactory: (fastifyHandler: RequestListener) => {
      const server = createServer(sendFastPath({ platform, routes: SEND_ROUTES, bodyLimit: BODY_LIMIT, isClosing: () => closing, handle: sendAndLog, fallback: fastifyHandler }));
      server.keepAliveTimeout = 72_000;
      server.requestTimeout = 0;
      return server;
    },
  });
  const pending = new Set<Pending>();

  const parseJson = (_req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void): void => {
    done(null, parseJsonText(typeof body === 'string' ? body : body.toString('utf8')));
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    done(null, new FormBody(Object.fromEntries(new URLSearchParams(text))));
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, parseJson);

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const p: Pending = {
        timer: setTimeout(() => {
          pending.delete(p);
          resolve();
        }, ms),
        done: resolve,
      };
      pending.add(p);
    });

  function inScope(kind: RouteKind): boolean {
    const s = platform.faults.scope;
    return s === 'all' || (s === 'business' ? kind !== 'oauth' : kind === 'send');
  }

  function log(req: FastifyRequest, path: string, a: Answer | null, status: number | null, fault: FaultKind | null, meta: SendResult['meta'] | undefined): void {
    const b = req.body;
    const body = b instanceof InvalidJson ? b.raw : b instanceof FormBody ? b.fields : (b ?? null);
    platform.received.add({
      time: Date.now(),
      path,
      oa_id: meta?.oa_id ?? null,
      tracking_id: meta?.tracking_id ?? trackingIdOf(req.body),
      body,
      response: a ? a.body : null,
      http_status: status,
      fault,
    });
  }

  /** A send taken by the fast path: carried out, counted and logged as Fastify's route would; returns the answer's JSON. */
  const sendCounters = new Map<string, { count: number }>();
  function sendAndLog(route: SendRoute, headers: IncomingMessage['headers'], bodyText: string): string {
    const counter = sendCounters.get(route.path);
    if (counter) counter.count++;
    const body = parseJsonText(bodyText);
    const result = send(platform, route.kind, header(headers, 'access_token'), header(headers, 'appsecret_proof'), businessBodyOf(body), route.development);
    const answer = JSON.stringify(result.body);
    const meta = result.meta;
    platform.received.addLogged(
      { time: Date.now(), path: route.path, oa_id: meta.oa_id, tracking_id: meta.tracking_id ?? trackingIdOf(body), http_status: 200, fault: null },
      // Text that was not JSON is logged as that text, as by Fastify's route.
      body instanceof InvalidJson ? { value: bodyText } : { json: bodyText },
      { json: answer },
    );
    return answer;
  }

  function answer(req: FastifyRequest, reply: FastifyReply, kind: RouteKind, path: string, a: Answer): FastifyReply {
    if (kind === 'send') log(req, path, a, a.status ?? 200, null, a.send);
    if (a.status !== undefined) reply.code(a.status);
    return reply.send(a.body);
  }

  async function faulted(req: FastifyRequest, reply: FastifyReply, kind: RouteKind, path: string, handler: Handler): Promise<FastifyReply | undefined> {
    const f = platform.faults;
    const latency = f.latency_ms + (f.latency_jitter_ms > 0 ? Math.floor(Math.random() * (f.latency_jitter_ms + 1)) : 0);
    if (latency > 0) await sleep(latency);
    const now = Date.now();
    let fault: FaultKind | null = null;
    let effect: 'http_5xx' | 'timeout' | 'unknown_error' | null = null;
    if (f.outage_until !== null && now < f.outage_until && (f.outage_from === null || now >= f.outage_from)) {
      fault = 'outage';
      effect = f.outage_mode === '5xx' ? 'http_5xx' : f.outage_mode;
    } else {
      const r = Math.random();
      if (r < f.error_rate_5xx) fault = 'http_5xx';
      else if (r < f.error_rate_5xx + f.timeout_rate) fault = 'timeout';
      else if (r < f.error_rate_5xx + f.timeout_rate + f.unknown_error_rate) fault = 'unknown_error';
      effect = fault as typeof effect;
    }
    if (fault === null || effect === null) return answer(req, reply, kind, path, await handler(req));
    countFault(platform, fault);
    const processed = f.after_processing ? await handler(req) : null;
    if (effect === 'http_5xx') {
      const status = f.error_status;
      const title = `${status} ${STATUS_CODES[status] ?? 'Server Error'}`;
      if (kind === 'send') log(req, path, processed, status, fault, processed?.send);
      return reply
        .code(status)
        .header('content-type', 'text/html')
        .send(`<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`);
    }
    if (effect === 'unknown_error') {
      if (kind === 'send') log(req, path, processed ?? { body: znsError(-100) }, 200, fault, processed?.send);
      return reply.send(znsError(-100));
    }
    // timeout: never answer; drop the connection after timeout_ms (or when the client gives up first).
    if (kind === 'send') log(req, path, processed, null, fault, processed?.send);
    reply.hijack();
    const socket: Socket = req.raw.socket;
    const p: Pending = {
      timer: setTimeout(() => {
        pending.delete(p);
        socket.destroy();
      }, f.timeout_ms),
      done: () => socket.destroy(),
    };
    pending.add(p);
    socket.once('close', () => {
      clearTimeout(p.timer);
      pending.delete(p);
    });
    return undefined;
  }

  function route(method: 'GET' | 'POST', path: string, kind: RouteKind, handler: Handler): void {
    const counter = { count: 0 };
    platform.routeCounters.set(`${method} ${path}`, counter);
    app.route({
      method,
      url: path,
      handler: (req, reply) => {
        counter.count++;
        if (!platform.faultsOn || !inScope(kind)) {
          const a = handler(req);
          if (a instanceof Promise) return a.then((x) => answer(req, reply, kind, path, x));
          return answer(req, reply, kind, path, a);
        }
        return faulted(req, reply, kind, path, handler);
      },
    });
  }

  // ------------------------------------------------------------------ OAuth host
  route('POST', '/v4/oa/access_token', 'oauth', (req) => {
    const b = req.body;
    return { body: requestToken(platform, header(req.headers, 'secret_key'), b instanceof FormBody ? b.fields : null) };
  });

  // ------------------------------------------------------------------ sends
  // The usual answers come from the fast path (send-fast-path.ts); these routes take what it hands on.
  for (const sendRoute of SEND_ROUTES) {
    route('POST', sendRoute.path, 'send', (req) => {
      const r = send(platform, sendRoute.kind, header(req.headers, 'access_token'), header(req.headers, 'appsecret_proof'), businessBodyOf(req.body), sendRoute.development);
      return { body: r.body, send: r.meta };
    });
    sendCounters.set(sendRoute.path, platform.routeCounters.get(`POST ${sendRoute.path}`) as { count: number });
  }

  // ------------------------------------------------------------------ reads
  const authed = (fn: (oa: OaState, req: FastifyRequest) => object | Promise<object>): Handler => (req) => {
    const oa = authenticate(platform, header(req.headers, 'access_token'), header(req.headers, 'appsecret_proof'));
    if (!('oa_id' in oa)) return { body: oa };
    const out = fn(oa, req);
    return out instanceof Promise ? out.then((body) => ({ body })) : { body: out };
  };
  const q = (req: FastifyRequest): Record<string, string | undefined> => req.query as Record<string, string | undefined>;
  route('GET', '/message/quota', 'business', authed((oa) => quotaBody(platform, oa)));
  route('GET', '/template/all', 'business', authed((oa, req) => templateList(platform, oa, q(req))));
  route('GET', '/template/info/v2', 'business', authed((oa, req) => templateInfo(platform, oa, q(req).template_id)));
  route('GET', '/template/info', 'business', authed(() => znsError(-106)));
  route('GET', '/message/status', 'business', authed((oa, req) => messageStatus(platform, oa, q(req).message_id, q(req).phone)));
  route('GET', '/rsa/key/get', 'business', authed((oa) => getRsaKey(platform, oa)));
  route('GET', '/rsa/key/gen', 'business', authed((oa) => generateOaRsaKey(platform, oa)));
  route('POST', '/rsa/key/gen', 'business', authed((oa) => generateOaRsaKey(platform, oa)));

  // ------------------------------------------------------------------ control
  registerControlRoutes(app, platform);

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err instanceof ControlError) return reply.code(err.status).send({ error: err.message });
    if (err instanceof FaultError) return reply.code(400).send({ error: err.message });
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    return reply.code(status).send({ error: err.message });
  });

  return {
    app,
    abortPending() {
      closing = true;
      for (const p of pending) {
        clearTimeout(p.timer);
        p.done();
      }
      pending.clear();
    },
  };
}
