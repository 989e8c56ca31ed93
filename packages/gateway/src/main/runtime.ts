import pino, { type Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { createAcceptanceWriter } from '../services/acceptance-writer.ts';
import { AccessTokens } from '../services/platform-tokens.ts';
import { PlatformQuota } from '../services/platform-quota.ts';
import type { AdminDependencies } from '../services/admin.ts';
import { ApiKeyAuthenticator } from '../services/authentication.ts';
import { Catalog } from '../services/catalog-cache.ts';
import { Metrics } from '../services/metrics.ts';
import type { Dependencies } from '../services/context.ts';
import { openStore } from '../store/database.ts';
import { migrate } from '../store/migrate.ts';
import { ZnsClient } from '../platform/zns-client.ts';

/** How long GET /quota or a batch waits for a first quota lookup of a sender account. */
const PLATFORM_QUOTA_WAIT_MS = 2000;

export interface Runtime {
  deps: Dependencies;
  admin: AdminDependencies;
  authenticator: ApiKeyAuthenticator;
  /** Access tokens per sender account, refreshed once at a time across processes. */
  accessTokens: AccessTokens;
  appliedMigrations: string[];
  /** Commits what was accepted, then closes the store. */
  close(): Promise<void>;
}

/** Opens the store, applies migrations and wires the services: shared by every entry point. */
export async function createRuntime(config: Config, options: { log?: Logger; clock?: () => number } = {}): Promise<Runtime> {
  const log = options.log ?? pino({ level: config.logLevel });
  const clock = options.clock ?? Date.now;
  const store = openStore(config.database);
  let appliedMigrations: string[];
  try {
    appliedMigrations = await migrate(store, clock());
  } catch (error) {
    await store.close();
    throw error;
  }
  const acceptanceWriter = createAcceptanceWriter(store, clock);
  const platform = new ZnsClient(config.zns);
  // One token cache per process, shared by dispatch, template sync and quota lookups.
  const accessTokens = new AccessTokens({ config, store, clock, log, platform });
  const platformQuota = new PlatformQuota({ store, clock, log, platform }, accessTokens, {
    ...config.platformQuota,
    // A request with nothing cached waits this long at most; the answer is cached when it comes.
    waitMs: Math.min(config.zns.timeoutMs, PLATFORM_QUOTA_WAIT_MS),
  });
  const deps: Dependencies = {
    config,
    store,
    clock,
    log,
    acceptanceWriter,
    catalog: new Catalog(store, config.authCacheMs, clock),
    platform,
    platformQuota,
    metrics: new Metrics(store, clock),
    idempotencyKeysInFlight: new Set(),
  };
  const authenticator = new ApiKeyAuthenticator(store, config.authCacheMs, clock);
  return {
    deps,
    admin: { ...deps, forgetCachedKeys: () => authenticator.forgetAll() },
    authenticator,
    accessTokens,
    appliedMigrations,
    close: async () => {
      await acceptanceWriter.drain();
      await platform.close();
      await store.close();
    },
  };
}
