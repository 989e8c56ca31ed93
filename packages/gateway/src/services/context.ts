import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { ZnsClient } from '../platform/zns-client.ts';
import type { Store } from '../store/database.ts';
import type { AcceptanceWriter } from './acceptance-writer.ts';
import type { Catalog } from './catalog-cache.ts';
import type { Metrics } from './metrics.ts';
import type { PlatformQuota } from './platform-quota.ts';

/** Long-lived parts every service uses; built once by a composition root in main/. */
export interface Dependencies {
  readonly config: Config;
  readonly store: Store;
  readonly clock: () => number;
  readonly log: Logger;
  readonly acceptanceWriter: AcceptanceWriter;
  readonly catalog: Catalog;
  /** The ZNS platform (or the simulator), over HTTP. */
  readonly platform: ZnsClient;
  /** The platform's daily quota per sender account, cached briefly (GET /quota, batch acceptance). */
  readonly platformQuota: PlatformQuota;
  readonly metrics: Metrics;
  /** Idempotency keys being worked on in this process: a second request with one is 409. */
  readonly idempotencyKeysInFlight: Set<string>;
}

/** The caller of a public API request: the authenticated key and its workspace. */
export interface Caller {
  readonly workspaceId: string;
  readonly apiKeyId: string;
  readonly scopes: readonly string[];
}

export interface RequestContext {
  readonly deps: Dependencies;
  readonly caller: Caller;
  readonly requestId: string;
  readonly log: Logger;
}
