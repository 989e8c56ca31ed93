import { MessageCounts } from '../caches/message-counts.ts';
import { SignInThrottle } from '../caches/sign-in-throttle.ts';
import pino, { type Logger } from 'pino';
import { AccessTokens } from '../caches/access-tokens.ts';
import { ApiKeyCache } from '../caches/api-keys.ts';
import { Catalog } from '../caches/catalog.ts';
import { EventSigners } from '../caches/event-signers.ts';
import { PlatformQuota } from '../caches/platform-quota.ts';
import type { Config } from '../config/config.ts';
import { masterKeyRing } from '../config/master-key.ts';
import { createAcceptanceWriter } from '../infrastructure/acceptance-writer.ts';
import { BackupSlot } from '../infrastructure/backup-slot.ts';
import { createDeliveryEventWriter } from '../infrastructure/delivery-event-writer.ts';
import { Metrics } from '../infrastructure/metrics.ts';
import { ZnsClient } from '../platform/zns-client.ts';
import { createContext, type Caller, type Context, type ServiceParts } from '../services/context.ts';
import { TtlCache } from '../lib/ttl-cache.ts';
import { openStore, type StoreOptions } from '../store/database.ts';
import { migrate } from '../store/migrate.ts';
import type { WriteLock } from '../store/write-lock.ts';

/** How long GET /quota or a batch waits for a first quota lookup of a sender account. */
const PLATFORM_QUOTA_WAIT_MS = 2000;

/** Something the runtime stops when it closes: an HTTP server, a worker loop. */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The one object that owns every long-lived part of a process: the store's pool, the platform
 * client, the caches, the group-commit writers, and (once started) the HTTP server and worker
 * loops. `close()` takes them down in order: a backup being copied stops, servers stop taking work,
 * loops finish theirs, the writers commit what they hold, then the platform client and the store close.
 */
export interface Runtime extends ServiceParts {
  readonly appliedMigrations: string[];
  /** A verb's context for this caller on this process's parts. */
  contextFor<C extends Caller>(caller: C, log?: Logger): Context<C>;
  /** Hands the runtime something to stop first on close (an HTTP server, which takes work in); the name is what a slow stop logs. */
  ownServer(name: string, server: Stoppable): void;
  /** Hands the runtime a worker loop, stopped after the servers and before the writers flush. */
  ownLoop(name: string, loop: Stoppable): void;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log?: Logger;
  clock?: () => number;
  /** SQLite: the write lock shared with the process's other threads on the same database. */
  writeLock?: WriteLock;
  /** SQLite: who checkpoints the write-ahead log (StoreOptions); a serving process does it in the background. */
  walCheckpoints?: StoreOptions['walCheckpoints'];
  /** SQLite: where the write-ahead log's fsyncs run (StoreOptions). */
  walFsyncs?: StoreOptions['walFsyncs'];
  /** False in a thread whose metrics another thread serves (store gauges and process metrics come from there). */
  processWideMetrics?: boolean;
}

interface NamedStoppable {
  name: string;
  part: Stoppable;
}

/** While a stop takes longer than this, what it still waits for is logged this often. */
const SLOW_STOP_LOG_EVERY_MS = 10_000;

/** Operators are people and their automation: a few hundred tokens at most, misses included. */
const MAX_CACHED_OPERATOR_TOKENS = 1000;

/** Opens the store, applies migrations and builds the parts: shared by every entry point. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? pino({ level: config.logLevel });
  const clock = options.clock ?? Date.now;
  const store = openStore(config.database, {
    writeLock: options.writeLock,
    walCheckpoints: options.walCheckpoints,
    walFsyncs: options.walFsyncs,
    onCheckpointFailure: (error) => log.error({ err: error }, 'checkpointing the write-ahead log failed; the next round tries again'),
  });
  let appliedMigrations: string[];
  try {
    appliedMigrations = await migrate(store, clock());
  } catch (error) {
    await store.close();
    throw error;
  }
  const platform = new ZnsClient(config.zns);
  // One token cache per process, shared by dispatch, template sync and quota lookups.
  const accessTokens = new AccessTokens({ config, store, clock, log, platform });
  const parts: ServiceParts = {
    config,
    store,
    clock,
    log,
    platform,
    accessTokens,
    platformQuota: new PlatformQuota({ store, clock, log, platform }, accessTokens, {
      ...config.platformQuota,
      // A request with nothing cached waits this long at most; the answer is cached when it comes.
      waitMs: Math.min(config.zns.timeoutMs, PLATFORM_QUOTA_WAIT_MS),
    }),
    catalog: new Catalog(store, config.authCacheMs, clock),
    apiKeys: new ApiKeyCache(store, config.authCacheMs, clock),
    operatorTokens: new TtlCache(config.authCacheMs, MAX_CACHED_OPERATOR_TOKENS, clock),
    eventSigners: new EventSigners(store, masterKeyRing(config), config.authCacheMs, clock),
    acceptanceWriter: createAcceptanceWriter(store, clock),
    deliveryEventWriter: createDeliveryEventWriter(store),
    metrics: new Metrics(store, clock, { processWide: options.processWideMetrics ?? true }),
    idempotencyKeysInFlight: new Set(),
    signInThrottle: new SignInThrottle(clock),
    messageCounts: new MessageCounts(store, clock),
    backups: new BackupSlot(),
  };
  const servers: NamedStoppable[] = [];
  const loops: NamedStoppable[] = [];
  let closing: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    // Every step runs even when one before it failed, so the store is always closed; the first failure is rethrown.
    const failures: unknown[] = [];
    const waitingFor = new Set<string>();
    const step = async (name: string, work: () => Promise<unknown>): Promise<void> => {
      waitingFor.add(name);
      try {
        await work();
      } catch (error) {
        failures.push(error);
      } finally {
        waitingFor.delete(name);
      }
    };
    const startedAt = performance.now();
    // A stop that hangs is ended by the process's deadline; these lines say what it was waiting for.
    const progress = setInterval(
      () => log.warn({ waiting_for: [...waitingFor], elapsed_ms: Math.round(performance.now() - startedAt) }, 'still stopping'),
      SLOW_STOP_LOG_EVERY_MS,
    ).unref();
    try {
      // A backup being copied would hold its request, and the server's close, for as long as the copy takes.
      parts.backups.abandon();
      for (const server of servers.splice(0)) await step(server.name, () => server.part.stop());
      await Promise.all(loops.splice(0).map((loop) => step(loop.name, () => loop.part.stop())));
      // Loops and requests may have handed work to the writers up to the moment they stopped.
      await step('writers', () => Promise.all([parts.acceptanceWriter.drain(), parts.deliveryEventWriter.drain()]));
      await step('platform client', () => platform.close());
      await step('store', () => store.close());
    } finally {
      clearInterval(progress);
    }
    if (failures.length > 0) throw failures[0];
  };
  return {
    ...parts,
    appliedMigrations,
    contextFor: (caller, requestLog) => createContext(parts, caller, requestLog),
    ownServer: (name, server) => servers.push({ name, part: server }),
    ownLoop: (name, loop) => loops.push({ name, part: loop }),
    close: () => (closing ??= close()),
  };
}
