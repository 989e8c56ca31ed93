import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { ServiceParts } from '../services/context.ts';
import { routeDependenciesOf } from './app.ts';
import { registerClosing } from './plugins/closing.ts';
import { registerErrorHandling } from './plugins/errors.ts';
import { answerFrameworkError, clientErrorAnswerer, registerProtocolChecks } from './plugins/protocol-errors.ts';
import { generateRequestId, registerRequestId } from './plugins/request-id.ts';
import { registerRequestMetrics } from './plugins/request-metrics.ts';
import { registerResponseHeaders } from './plugins/response-headers.ts';
import type { App } from './route-support.ts';
import { registerHealth } from './routes/health.ts';
import { registerMetrics } from './routes/metrics.ts';

/**
 * The HTTP server of a process that serves no API (`tms worker`): liveness, readiness and metrics
 * for probes and Prometheus, answered by the same routes as the API's, and nothing else (no API,
 * no console, no reference pages).
 */
export async function buildHealthApp(parts: { services: ServiceParts; logger: Logger }): Promise<App> {
  const { config } = parts.services;
  const app = Fastify({
    loggerInstance: parts.logger as FastifyBaseLogger,
    genReqId: generateRequestId,
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: !config.accessLog }),
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: clientErrorAnswerer(parts.logger),
    // The same protection from slow clients as the API's server (see app.ts).
    http: { requireHostHeader: false, headersTimeout: config.http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
  }).withTypeProvider<TypeBoxTypeProvider>() as App;
  registerErrorHandling(app);
  registerProtocolChecks(app);
  registerRequestId(app);
  registerClosing(app);
  registerResponseHeaders(app);
  registerRequestMetrics(app, parts.services.metrics.http);
  // The same dependencies as the API's routes (these take no API keys, so nothing is ever rate-limited).
  const route = routeDependenciesOf(parts);
  registerHealth(app, route);
  registerMetrics(app, route);
  return app;
}
