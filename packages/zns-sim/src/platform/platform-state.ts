/**
 * The simulated platform's state, free of HTTP. Each platform area (OAuth, sending, templates, quota,
 * messages, ...) is a module of functions over this one object; server.ts and control.ts map requests onto
 * those functions, and create-platform.ts builds the object from a seed.
 */
import { ControlError } from '../control-error.ts';
import type { EventDispatcher } from '../events.ts';
import type { Faults } from '../faults.ts';
import type { Scheduler } from '../scheduler.ts';
import type { Settings } from '../seed.ts';
import type { OaState } from './accounts.ts';
import type { MessageIdSource, MessageRecord } from './messages.ts';
import type { AccessTokenRecord, AuthorizationCodeRecord } from './oauth-tokens.ts';
import type { ReceivedLog } from './received-log.ts';
import type { CompiledRecipientRule } from './recipient-rules.ts';
import type { Counters } from './stats.ts';
import type { TemplateState } from './templates.ts';

export interface Platform {
  readonly settings: Settings;
  /** Clock for token expiry, quota days and sent_time. */
  readonly now: () => number;
  readonly startedAt: number;
  readonly scheduler: Scheduler;
  readonly events: EventDispatcher;

  /** By oa_id. */
  readonly accounts: Map<string, OaState>;
  /** app_id to app secret. */
  readonly appSecrets: Map<string, string>;
  /** By template_id. */
  readonly templates: Map<string, TemplateState>;
  readonly accessTokens: Map<string, AccessTokenRecord>;
  /** Refresh token to the OA it currently belongs to. */
  readonly refreshTokens: Map<string, OaState>;
  readonly authorizationCodes: Map<string, AuthorizationCodeRecord>;
  recipientRules: CompiledRecipientRule[];
  /** By msg_id, oldest first. */
  readonly messages: Map<string, MessageRecord>;
  readonly messageIds: MessageIdSource;

  readonly received: ReceivedLog;
  /** How often each tracking_id was accepted, oldest first (for the duplicate counters). */
  readonly trackingIdCounts: Map<string, number>;
  counters: Counters;
  /** Requests per route ("POST /message/template"); the server holds each counter to bump it cheaply. */
  readonly routeCounters: Map<string, { count: number }>;

  faults: Faults;
  /** Whether any fault is set: the one check on the hot path when none is. */
  faultsOn: boolean;

  /**
   * Told about every change worth keeping across a restart (see state.ts). `urgent`: the change is about to
   * be answered to a client (a new token pair, a new RSA key), so it must be stored first; a throw refuses it.
   */
  onStateChange: ((urgent: boolean) => void) | null;
  /**
   * Durable sends: stores an accepted send before it is answered, as a real platform would, so a crash of the
   * simulator never forgets a send it answered; throws when it cannot, and the send is refused. Null (the
   * default): sends reach the state file with the rest of the state, up to a second later.
   */
  storeSend: ((message: MessageRecord) => void) | null;
}

export function stateChanged(platform: Platform, urgent: boolean): void {
  if (platform.onStateChange) platform.onStateChange(urgent);
}

/** The OA a control-API call names, or a 404 for the caller. */
export function accountOr404(platform: Platform, oaId: string): OaState {
  const oa = platform.accounts.get(oaId);
  if (!oa) throw new ControlError(404, `unknown oa_id ${oaId}`);
  return oa;
}
