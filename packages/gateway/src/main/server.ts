import { buildApp } from '../http/app.ts';
import type { App } from '../http/route-support.ts';
import { MessageDispatcher } from '../services/dispatch.ts';
import { stallBoundMs } from '../services/loop-health.ts';
import { WebhookSender } from '../services/webhook-sender.ts';
import { DispatcherLoop } from '../workers/dispatcher.ts';
import { maintenanceTasks } from '../workers/maintenance.ts';
import { templateSyncTask } from '../workers/template-sync.ts';
import { deliveryCheckTask } from '../workers/delivery-check.ts';
import { WebhookSenderLoop } from '../workers/webhook-sender.ts';
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
  const { config } = runtime.deps;
  let app: App | null = null;
  let url: string | null = null;
  if (roles.api) {
    app = await buildApp({ deps: runtime.deps, admin: runtime.admin, authenticator: runtime.authenticator, logger: runtime.deps.log, accessTokens: runtime.accessTokens });
    url = await app.listen({ host: config.host, port: config.port });
  }
  const tasks = [...maintenanceTasks(runtime.deps)];
  if (config.templateSyncMs > 0) tasks.push(templateSyncTask(runtime.deps, runtime.accessTokens, config.templateSyncMs));
  if (config.deliveryCheckAfterMs > 0) {
    tasks.push(deliveryCheckTask(runtime.deps, runtime.accessTokens, { afterMs: config.deliveryCheckAfterMs, maxAgeMs: DELIVERY_CHECK_MAX_AGE_MS, batchSize: 200 }));
  }
  const worker = roles.worker ? new Worker(tasks, runtime.deps.log) : null;
  worker?.start();
  const { dispatch } = config;
  const platformCallMs = config.zns.timeoutMs;
  const reconcileEveryMs = Math.min(5000, dispatch.leaseMs);
  const dispatcher = roles.worker
    ? new DispatcherLoop(
        new MessageDispatcher(runtime.deps, runtime.accessTokens, { ...dispatch, maxAttempts: 5, platformTimeoutMs: platformCallMs }),
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
        runtime.deps.log,
        runtime.deps.metrics.loops,
        runtime.deps.clock,
      )
    : null;
  dispatcher?.start();
  const webhooks = roles.worker ? startWebhookSender(runtime) : null;
  return {
    app,
    worker,
    dispatcher,
    webhooks,
    url,
    stop: async () => {
      await app?.close();
      await Promise.all([dispatcher?.stop(), webhooks?.stop()]);
      await worker?.stop();
      await runtime.close();
    },
  };
}

/** Attempts in flight get this long to finish on SIGTERM; then they are cut short and given back. */
const WEBHOOK_STOP_GRACE_MS = 5000;

function startWebhookSender(runtime: Runtime): WebhookSenderLoop | null {
  const { config, log } = runtime.deps;
  if (!config.masterKey) {
    // Webhooks are signed with the API key, stored encrypted under the master key.
    log.error('TMS_MASTER_KEY is not set: delivery-report webhooks cannot be signed and are not sent');
    return null;
  }
  const settings = config.webhooks;
  const sender = new WebhookSender(runtime.deps, settings, config.masterKey, config.allowPrivateWebhookTargets);
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
    runtime.deps.metrics.loops,
    runtime.deps.clock,
  );
  loop.start();
  return loop;
}
