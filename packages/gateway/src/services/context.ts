import type { Logger } from 'pino';
import type { AccessTokens } from '../caches/access-tokens.ts';
import type { TtlCache } from '../lib/ttl-cache.ts';
import type { OperatorTokenRow } from '../store/schema.ts';
import type { ApiKeyCache } from '../caches/api-keys.ts';
import type { Catalog } from '../caches/catalog.ts';
import type { EventSigners } from '../caches/event-signers.ts';
import type { PlatformQuota } from '../caches/platform-quota.ts';
import type { SignInThrottle } from '../caches/sign-in-throttle.ts';
import type { MessageCounts } from '../caches/message-counts.ts';
import type { Config } from '../config/config.ts';
import type { AcceptanceWriter } from '../infrastructure/acceptance-writer.ts';
import type { BackupSlot } from '../infrastructure/backup-slot.ts';
import type { DeliveryEventWriter } from '../infrastructure/delivery-event-writer.ts';
import type { Metrics } from '../infrastructure/metrics.ts';
import type { ZnsClient } from '../platform/zns-client.ts';
import type { Store } from '../store/database.ts';
import type { ConsoleRole } from '../store/schema.ts';

/**
 * The process's long-lived parts, each built once and owned by the runtime (main/runtime.ts),
 * which also closes them. Verbs reach them through their context; worker engines are given them.
 */
export interface ServiceParts {
  readonly config: Config;
  readonly store: Store;
  readonly clock: () => number;
  readonly log: Logger;
  /** The ZNS platform (or the simulator), over HTTP. */
  readonly platform: ZnsClient;
  /** Access tokens per sender account, refreshed once at a time across processes. */
  readonly accessTokens: AccessTokens;
  /** The platform's daily quota per sender account, cached briefly (GET /quota, batch acceptance). */
  readonly platformQuota: PlatformQuota;
  /** Templates and sender accounts read on every send. */
  readonly catalog: Catalog;
  /** API keys by hash, for authentication. */
  readonly apiKeys: ApiKeyCache;
  /** Active named operator tokens by hash (null: no such token), cached for TMS_AUTH_CACHE_MS. */
  readonly operatorTokens: TtlCache<OperatorTokenRow | null>;
  /** Sender accounts with their OA secret keys, for verifying platform events. */
  readonly eventSigners: EventSigners;
  /** Commits acceptances in groups (one transaction for the requests of one moment). */
  readonly acceptanceWriter: AcceptanceWriter;
  /** Commits delivery events and their reports in groups. */
  readonly deliveryEventWriter: DeliveryEventWriter;
  readonly metrics: Metrics;
  /** Idempotency keys being worked on in this process: a second request with one is 409. */
  readonly idempotencyKeysInFlight: Set<string>;
  /** Failed console sign-ins per account and per address. */
  readonly signInThrottle: SignInThrottle;
  /** The console overview's message counts, kept briefly for busy workspaces. */
  readonly messageCounts: MessageCounts;
  /** The one backup this process may take at a time. */
  readonly backups: BackupSlot;
}

/** A public API request, authenticated by an API key of a workspace. */
export interface ApiKeyCaller {
  readonly kind: 'api_key';
  readonly workspaceId: string;
  readonly apiKeyId: string;
  readonly scopes: readonly string[];
}

/** A person signed in to the console (/console/api), a member of one workspace with a role. */
export interface ConsoleUserCaller {
  readonly kind: 'console_user';
  readonly workspaceId: string;
  readonly userId: string;
  readonly email: string;
  readonly role: ConsoleRole;
}

/** Whoever acts inside one workspace: its API keys and its console users. */
export type WorkspaceCaller = ApiKeyCaller | ConsoleUserCaller;

/** The operator: /admin/v1 with an operator token, or `tms admin` on the machine. */
export interface OperatorCaller {
  readonly kind: 'operator';
  /**
   * Who, for the audit log: a named operator token's name, `bootstrap token` for TMS_ADMIN_TOKEN,
   * `tms admin (user@host)` on the command line. Absent for the service's own set-up work.
   */
  readonly name?: string;
  /** The named operator token that authenticated the request, if one did. */
  readonly tokenId?: string;
}

/** The ZNS platform posting a webhook event; who it speaks for is known once its signature is checked. */
export interface PlatformCaller {
  readonly kind: 'platform';
}

/** A request that has not proved who it is yet (authentication itself). */
export interface AnonymousCaller {
  readonly kind: 'anonymous';
}

/** A long-running task of this process (template sync, maintenance). */
export interface TaskCaller {
  readonly kind: 'task';
  readonly task: string;
}

export type Caller = ApiKeyCaller | ConsoleUserCaller | OperatorCaller | PlatformCaller | AnonymousCaller | TaskCaller;

/** What every verb is given with its input: who asks, and the process's parts to answer with. */
export interface Context<C extends Caller = Caller> {
  readonly caller: C;
  readonly store: Store;
  readonly clock: () => number;
  readonly log: Logger;
  readonly parts: ServiceParts;
}

/** Every domain verb has this one shape: `verb({ ctx, input })`. */
export interface VerbCall<C extends Caller, Input> {
  readonly ctx: Context<C>;
  readonly input: Input;
}

/** The context of a caller on the process's parts, logging to `log` (a request's logger) when given. */
export function createContext<C extends Caller>(parts: ServiceParts, caller: C, log: Logger = parts.log): Context<C> {
  return { caller, store: parts.store, clock: parts.clock, log, parts };
}

