/** Fault injection settings, changed at run time through the control API. */

export type FaultScope = 'send' | 'business' | 'all';
export type OutageMode = '5xx' | 'timeout' | 'unknown_error';
/** How a faulted request failed: one of the random faults, or any of them inside an outage window. */
export type FaultKind = 'http_5xx' | 'timeout' | 'unknown_error' | 'outage';

export interface Faults {
  /** Added before every in-scope request is processed. */
  latency_ms: number;
  /** Uniform random extra latency in 0..latency_jitter_ms. */
  latency_jitter_ms: number;
  /** Share (0..1) of in-scope requests answered with HTTP `error_status` and an HTML body. */
  error_rate_5xx: number;
  error_status: number;
  /** Share (0..1) of in-scope requests that never get an answer: the socket is destroyed after `timeout_ms`. */
  timeout_rate: number;
  timeout_ms: number;
  /** Share (0..1) of in-scope requests answered HTTP 200 `{"error":-100,"message":"Unknown error","data":null}`. */
  unknown_error_rate: number;
  /** Outage window (epoch ms): every in-scope request inside it fails with `outage_mode`. */
  outage_from: number | null;
  outage_until: number | null;
  outage_mode: OutageMode;
  /**
   * When true, a 5xx / timeout / -100 fault on a send is decided AFTER the send was carried out (the message
   * was accepted, quota used, delivery scheduled): the ambiguous case that makes a careless client send twice.
   */
  after_processing: boolean;
  /** Which requests faults apply to: sends only, all business API calls (default), or also the OAuth endpoint. */
  scope: FaultScope;
}

export const DEFAULT_FAULTS: Readonly<Faults> = Object.freeze({
  latency_ms: 0,
  latency_jitter_ms: 0,
  error_rate_5xx: 0,
  error_status: 503,
  timeout_rate: 0,
  timeout_ms: 30_000,
  unknown_error_rate: 0,
  outage_from: null,
  outage_until: null,
  outage_mode: '5xx',
  after_processing: false,
  scope: 'business',
});

export class FaultError extends Error {
  override name = 'FaultError';
}

function num(v: unknown, key: string, min: number, max: number, integer: boolean): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw new FaultError(`${key} must be ${integer ? 'an integer' : 'a number'} in ${min}..${max}`);
  }
  return v;
}

/** Applies a partial update; throws FaultError on a bad field. Returns the new settings. */
export function mergeFaults(current: Faults, patch: unknown): Faults {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw new FaultError('faults must be a JSON object');
  const p = patch as Record<string, unknown>;
  const next: Faults = { ...current };
  for (const [key, v] of Object.entries(p)) {
    switch (key) {
      case 'latency_ms':
      case 'latency_jitter_ms':
        next[key] = num(v, key, 0, 600_000, true);
        break;
      case 'timeout_ms':
        next[key] = num(v, key, 1, 3_600_000, true);
        break;
      case 'error_status':
        next[key] = num(v, key, 500, 599, true);
        break;
      case 'error_rate_5xx':
      case 'timeout_rate':
      case 'unknown_error_rate':
        next[key] = num(v, key, 0, 1, false);
        break;
      case 'outage_from':
      case 'outage_until':
        next[key] = v === null ? null : num(v, key, 0, Number.MAX_SAFE_INTEGER, true);
        break;
      case 'outage_mode':
        if (v !== '5xx' && v !== 'timeout' && v !== 'unknown_error') throw new FaultError('outage_mode must be 5xx, timeout or unknown_error');
        next.outage_mode = v;
        break;
      case 'after_processing':
        if (typeof v !== 'boolean') throw new FaultError('after_processing must be a boolean');
        next.after_processing = v;
        break;
      case 'scope':
        if (v !== 'send' && v !== 'business' && v !== 'all') throw new FaultError('scope must be send, business or all');
        next.scope = v;
        break;
      default:
        throw new FaultError(`unknown fault field ${key}`);
    }
  }
  if (next.error_rate_5xx + next.timeout_rate + next.unknown_error_rate > 1) {
    throw new FaultError('error_rate_5xx + timeout_rate + unknown_error_rate must not exceed 1');
  }
  return next;
}

export function faultsActive(f: Faults): boolean {
  return f.latency_ms > 0 || f.latency_jitter_ms > 0 || f.error_rate_5xx > 0 || f.timeout_rate > 0 || f.unknown_error_rate > 0 || f.outage_until !== null;
}
