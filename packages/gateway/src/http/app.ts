import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { createContext, type ServiceParts } from '../services/context.ts';
import { registerClosing } from './plugins/closing.ts';
import { registerErrorHandling } from './plugins/errors.ts';
import { requireOperator } from './plugins/guards.ts';
import { registerJsonBody } from './plugins/json-body.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { MAX_PARAM_LENGTH, answerFrameworkError, clientErrorAnswerer, registerProtocolChecks } from './plugins/protocol-errors.ts';
import { RateLimiter } from './plugins/rate-limit.ts';
import { generateRequestId, registerRequestId } from './plugins/request-id.ts';
import { registerRequestMetrics } from './plugins/request-metrics.ts';
import { registerResponseHeaders } from './plugins/response-headers.ts';
import { createSchemaCompilers, type SchemaCompilers } from './plugins/schema-compilers.ts';
import type { App, RouteDependencies } from './route-support.ts';
import { registerConsole } from './console/register.ts';
import { registerAdminApiKeys } from './routes/admin/api-keys.ts';
import { registerAdminCatalog } from './routes/admin/catalog.ts';
import { registerAdminDatabaseBackup } from './routes/admin/database-backup.ts';
import { registerAdminMasterKey } from './routes/admin/master-key.ts';
import { registerAdminUsers } from './routes/admin/users.ts';
import { registerAdminPersonalData } from './routes/admin/personal-data.ts';
import { registerAdminWebhookDeliveries } from './routes/admin/webhook-deliveries.ts';
import { registerAdminOperators } from './routes/admin/operators.ts';
import { registerAdminSupport } from './routes/admin/support.ts';
import { registerAdminWorkspaces } from './routes/admin/workspaces.ts';
import { registerHealth } from './routes/health.ts';
import { registerMetrics } from './routes/metrics.ts';
import { registerSendBatch } from './routes/messages/batch.ts';
import { registerCancelMessage } from './routes/messages/cancel.ts';
import { registerGetMessage } from './routes/messages/get.ts';
import { registerListMessages } from './routes/messages/list.ts';
import { registerSendRsa } from './routes/messages/rsa.ts';
import { registerSendMessage } from './routes/messages/send.ts';
import { registerListOas } from './routes/oas/list.ts';
import { registerPlatformEvents } from './routes/platform/events.ts';
import { registerGetQuota } from './routes/quota/get.ts';
import { registerListTemplates } from './routes/templates/list.ts';

const BODY_LIMIT_BYTES = 1024 * 1024;

export interface AppParts {
  /** The process's parts: routes reach them only through the contexts of verbs. */
  services: ServiceParts;
  logger: Logger;
}

/** What every route reaches the process through: its configuration, the API keys' rate limits, contexts for verbs. */
export function routeDependenciesOf(parts: AppParts): RouteDependencies {
  const { config, clock } = parts.services;
  return { config, limiter: new RateLimiter(config.rateLimit, clock), contextFor: (caller, log) => createContext(parts.services, caller, log) };
}

export async function buildApp(parts: AppParts, schemaCompilers: SchemaCompilers = createSchemaCompilers()): Promise<App> {
  const { config } = parts.services;
  const app = Fastify({
    schemaController: { compilersFactory: schemaCompilers.compilersFactory },
    loggerInstance: parts.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: generateRequestId,
    // Access logs cost CPU at thousands of requests per second: on only when asked (TMS_ACCESS_LOG).
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: !config.accessLog }),
    return503OnClosing: false,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Failures Node and the router answer on their own get the contract's error body too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: clientErrorAnswerer(parts.logger),
    // Node would answer a request without Host with a bodiless 400; registerProtocolChecks does.
    // Slow clients (a trickling body, headers that never end) are cut off and answered 408.
    http: {
      requireHostHeader: false,
      headersTimeout: config.http.headersTimeoutMs,
      // Node checks the two limits above only this often (30 s by default).
      connectionsCheckingInterval: 1000,
    },
    // Set here, not in `http`: Fastify writes its own requestTimeout (0, none) over the server's.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
  }).withTypeProvider<TypeBoxTypeProvider>() as App;
  app.setValidatorCompiler(schemaCompilers.validatorCompiler);
  registerErrorHandling(app);
  registerProtocolChecks(app);
  registerJsonBody(app);
  registerRequestId(app);
  registerClosing(app);
  registerResponseHeaders(app);
  registerRequestMetrics(app, parts.services.metrics.http);
  const route = routeDependenciesOf(parts);
  await registerOpenApi(app, { requireOperator: requireOperator(route), webhooks: config.webhooks });
  registerHealth(app, route);
  registerMetrics(app, route);
  registerSendMessage(app, route);
  registerSendBatch(app, route);
  registerSendRsa(app, route);
  registerGetMessage(app, route);
  registerListMessages(app, route);
  registerCancelMessage(app, route);
  registerListTemplates(app, route);
  registerListOas(app, route);
  registerGetQuota(app, route);
  await registerPlatformEvents(app, route);
  registerConsole(app, route);

  await app.register(async (operator) => {
    operator.addHook('onRequest', requireOperator(route));
    const scoped = operator as unknown as App;
    registerAdminWorkspaces(scoped, route);
    registerAdminApiKeys(scoped, route);
    registerAdminCatalog(scoped, route);
    registerAdminWebhookDeliveries(scoped, route);
    registerAdminSupport(scoped, route);
    registerAdminOperators(scoped, route);
    registerAdminUsers(scoped, route);
    registerAdminPersonalData(scoped, route);
    registerAdminDatabaseBackup(scoped, route);
    registerAdminMasterKey(scoped, route);
  });
  return app;
}
