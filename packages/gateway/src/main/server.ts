import { masterKeyRing } from '../config/master-key.ts';
import type { App } from '../http/route-support.ts';
import { closeServer } from '../http/close-server.ts';
import { MessageDispatcher } from '../workers/dispatch/engine.ts';
import { stallBoundMs } from '../infrastructure/loop-health.ts';
import { WebhookSender } from '../workers/webhooks/engine.ts';
import { DispatcherLoop } from '../workers/dispatch/loop.ts';
import { maintenanceTasks } from '../workers/maintenance.ts';
import { templateSyncTask } from '../workers/template-sync.ts';
import { deliveryCheckTask } from '../workers/delivery-checks/task.ts';
import { WebhookSenderLoop } from '../workers/webhooks/loop.ts';
import { Worker } from '../workers/worker.ts';
import type { Runtime } from './runtime.ts';

/** ZNS keeps an undelivered message for a limited time (a template's `timeout`, hours); a day covers it. */
const DELIVERY_CHECK_MAX_AGE_MS = 24 * 3_600_000;

export interface RunningService {
  app: App | null;
  worker: Worker | null;
  dispatcher: DispatcherLoop | null;
  /** The delivery-report webhook sender (worker roles). */
  webhooks: WebhookSenderLoop | null;
  url: string | null;
  /** Graceful stop: no new requests, finish in-flight ones and worker tasks, commit, close. */
  stop(): Promise<void>;
}

export async function startService(runtime: Runtime, roles: { api: boolean; worker: boolean }): Promise<RunningService> {
  const { config } = runtime;
  let app: App | null = null;
  let url: string | null = null;
  if (roles.api) {
    // Loaded here, not at the top: a thread or process without the API (the workers' thread of
    // `tms start`) then never loads Fastify, the routes and their schemas, which would cost it
    // start-up time and memory for code it does not run.
    const { buildApp } = await import('../http/app.ts');
    const server = await buildApp({ services: runtime, logger: runtime.log });
    app = server;
    url = await server.listen({ host: config.host, port: config.port });
    runtime.ownServer('API server', { stop: () => closeServer(server) });
  }
  const tasks = [...maintenanceTasks(runtime)];
  if (config.templateSyncMs > 0) tasks.push(templateSyncTask(runtime, config.templateSyncMs));
  if (config.deliveryCheckAfterMs > 0) {
    tasks.push(deliveryCheckTask(runtime, { afterMs: config.deliveryCheckAfterMs, maxAgeMs: DELIVERY_CHECK_MAX_AGE_MS, batchSize: 200 }));
  }
  const worker = roles.worker ? new Worker(tasks, runtime.log, { loops: runtime.metrics.loops, clock: runtime.clock }) : null;
  worker?.start();
  if (worker) runtime.ownLoop('periodic tasks', worker);
  const { dispatch } = config;
  const platformCallMs = config.zns.timeoutMs;
  const reconcileEveryMs = Math.min(5000, dispatch.leaseMs);
  const dispatcher = roles.worker
    ? new DispatcherLoop(
        new MessageDispatcher(runtime, runtime.accessTokens, { ...dispatch, maxAttempts: 5, platformTimeoutMs: platformCallMs }),
        {
          parallelRounds: dispatch.parallelRounds,
          idlePollMs: dispatch.idlePollMs,
          reconcileEveryMs,
          stallBounds: {
            claimsMs: stallBoundMs(dispatch.idlePollMs, platformCallMs),
            // A send may first wait for another process's token refresh, then make its own call.
            sendsMs: stallBoundMs(dispatch.idlePollMs, runtime.accessTokens.longestWaitMs + 2 * platformCallMs),
            reconcileMs: stallBoundMs(reconcileEveryMs, platformCallMs),
          },
        },
        runtime.log,
        runtime.metrics.loops,
        runtime.clock,
      )
    : null;
  dispatcher?.start();
  if (dispatcher) runtime.ownLoop('dispatch', dispatcher);
  const webhooks = roles.worker ? startWebhookSender(runtime) : null;
  return {
    app,
    worker,
    dispatcher,
    webhooks,
    url,
    stop: () => runtime.close(),
  };
}

/**
 * The probes' and Prometheus's server of a process without the API (`tms worker`): /healthz,
 * /readyz and /metrics on HOST and PORT, like `tms api`'s, so each process is configured the
 * same way. Started before the loops, so a port in use stops the process before it claims work.
 * Resolves with its address.
 */
export async function startHealthServer(runtime: Runtime): Promise<string> {
  const { config } = runtime;
  // Loaded here for the same reason as the API app: the workers' thread of `tms start` serves no probes.
  const { buildHealthApp } = await import('../http/health-app.ts');
  const server = await buildHealthApp({ services: runtime, logger: runtime.log });
  try {
    const url = await server.listen({ host: config.host, port: config.port });
    runtime.ownServer('health server', { stop: () => closeServer(server) });
    return url;
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** Attempts in flight get this long to finish on SIGTERM; then they are cut short and given back. */
const WEBHOOK_STOP_GRACE_MS = 5000;

function startWebhookSender(runtime: Runtime): WebhookSenderLoop | null {
  const { config, log } = runtime;
  if (!config.masterKey) {
    // Webhooks are signed with the API key, stored encrypted under the master key.
    log.error('TMS_MASTER_KEY is not set: delivery-report webhooks cannot be signed and are not sent');
    return null;
  }
  const settings = config.webhooks;
  const sender = new WebhookSender(runtime, settings, masterKeyRing(config) ?? config.masterKey, config.allowPrivateWebhookTargets);
  const loop = new WebhookSenderLoop(
    sender,
    {
      concurrency: settings.concurrency,
      receiverConcurrency: settings.receiverConcurrency,
      batchSize: settings.batchSize,
      idlePollMs: settings.idlePollMs,
      stopGraceMs: Math.min(WEBHOOK_STOP_GRACE_MS, settings.timeoutMs),
      stallBounds: { claimsMs: stallBoundMs(settings.idlePollMs, settings.timeoutMs), deliveriesMs: stallBoundMs(settings.idlePollMs, settings.timeoutMs) },
    },
    log,
    runtime.metrics.loops,
    runtime.clock,
  );
  loop.start();
  runtime.ownLoop('webhooks', loop);
  return loop;
}
