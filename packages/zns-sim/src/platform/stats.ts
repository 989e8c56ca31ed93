/** The simulator's counters and the control API's /stats view of them. */
import type { EventStats } from '../events.ts';
import type { FaultKind } from '../faults.ts';
import type { Platform } from './platform-state.ts';
import { clearReceived } from './received-log.ts';

export interface Stats {
  started_at: number;
  uptime_ms: number;
  requests: { total: number; by_route: Record<string, number> };
  sends: {
    received: number;
    accepted: number;
    rejected: number;
    by_error: Record<string, number>;
    duplicate_tracking_ids: number;
    duplicate_accepts: number;
  };
  faults: { http_5xx: number; timeouts: number; unknown_errors: number; outage: number };
  tokens: { issued: number; token_requests_rejected: number; invalid_access_token: number };
  messages: { stored: number; delivered: number; never_delivered: number; pending_delivery: number };
  events: EventStats;
  received_log: { size: number; limit: number; dropped: number };
}

export interface Counters {
  sendsReceived: number;
  sendsAccepted: number;
  sendsRejected: number;
  /** Rejected sends by ZNS error code. */
  rejectedByError: Record<string, number>;
  duplicateTrackingIds: number;
  duplicateAccepts: number;
  faults: Record<FaultKind, number>;
  tokensIssued: number;
  tokenRejected: number;
  invalidAccessToken: number;
  delivered: number;
}

export function newCounters(): Counters {
  return {
    sendsReceived: 0,
    sendsAccepted: 0,
    sendsRejected: 0,
    rejectedByError: {},
    duplicateTrackingIds: 0,
    duplicateAccepts: 0,
    faults: { http_5xx: 0, timeout: 0, unknown_error: 0, outage: 0 },
    tokensIssued: 0,
    tokenRejected: 0,
    invalidAccessToken: 0,
    delivered: 0,
  };
}

export function countFault(platform: Platform, kind: FaultKind): void {
  platform.counters.faults[kind]++;
}

export function collectStats(platform: Platform): Stats {
  const byRoute: Record<string, number> = {};
  let total = 0;
  for (const [route, counter] of platform.routeCounters) {
    if (counter.count > 0) byRoute[route] = counter.count;
    total += counter.count;
  }
  let pending = 0;
  let never = 0;
  for (const message of platform.messages.values()) {
    if (message.neverDelivered) never++;
    else if (message.deliveryTime === 0) pending++;
  }
  const counters = platform.counters;
  return {
    started_at: platform.startedAt,
    uptime_ms: platform.now() - platform.startedAt,
    requests: { total, by_route: byRoute },
    sends: {
      received: counters.sendsReceived,
      accepted: counters.sendsAccepted,
      rejected: counters.sendsRejected,
      by_error: { ...counters.rejectedByError },
      duplicate_tracking_ids: counters.duplicateTrackingIds,
      duplicate_accepts: counters.duplicateAccepts,
    },
    faults: { http_5xx: counters.faults.http_5xx, timeouts: counters.faults.timeout, unknown_errors: counters.faults.unknown_error, outage: counters.faults.outage },
    tokens: { issued: counters.tokensIssued, token_requests_rejected: counters.tokenRejected, invalid_access_token: counters.invalidAccessToken },
    messages: { stored: platform.messages.size, delivered: counters.delivered, never_delivered: never, pending_delivery: pending },
    events: { ...platform.events.stats },
    received_log: { size: platform.received.size, limit: platform.settings.received_limit, dropped: platform.received.dropped },
  };
}

/** Clears the received log, counters and event attempt log. OAs, tokens, quotas and messages stay. */
export function resetStats(platform: Platform): void {
  clearReceived(platform);
  platform.counters = newCounters();
  for (const counter of platform.routeCounters.values()) counter.count = 0;
  platform.events.resetStats();
  platform.events.clearLog();
}
