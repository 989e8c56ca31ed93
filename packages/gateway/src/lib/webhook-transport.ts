/**
 * Outgoing webhook requests: keep-alive pools per receiver, a whole-attempt time limit, no
 * redirects, at most a small part of the answer read, and (unless private targets are allowed)
 * every connection's DNS answer checked against the non-public ranges at connect time, so a name
 * that passed the URL check cannot be re-pointed at an internal address later (DNS rebinding).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { Dispatcher } from 'undici';
import { OnDemandAgent } from './http-agent.ts';
import { findWebhookUrlProblem, isNonPublicAddress } from './webhook-url.ts';

/** Most answer bytes read; the rest is discarded with the connection. */
export const RESPONSE_READ_LIMIT_BYTES = 64 * 1024;
/** How much of a refusing answer's body the attempt log keeps. */
const ERROR_BODY_EXCERPT_CHARS = 200;

export class NonPublicTargetError extends Error {
  readonly code = 'ERR_WEBHOOK_NON_PUBLIC_TARGET';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A net.connect `lookup` that refuses a name if any of its addresses is non-public. Node calls it
 * with `all: true` when it races address families (autoSelectFamily), otherwise for one address.
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const blocked = addresses.find((entry) => isNonPublicAddress(entry.address));
    if (blocked) return callback(new NonPublicTargetError(`${hostname} resolves to the non-public address ${blocked.address}`), []);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    if (options.all) return callback(null, addresses);
    callback(null, first.address, first.family);
  });
}

export interface WebhookTransportSettings {
  /** Whole attempt: connect, send, answer headers and the (capped) body. */
  timeoutMs: number;
  /** Keep-alive connections per receiver origin. */
  connectionsPerReceiver: number;
  allowPrivateTargets: boolean;
}

export interface WebhookPost {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  /** Answer the start of the receiver's body too, up to this many bytes (the console's test report shows it). */
  keepAnswerBytes?: number;
}

export interface WebhookAnswer {
  /** Null when no answer came (see error). */
  statusCode: number | null;
  /** Why the attempt did not get a 2xx: a refusing answer's excerpt or the connection problem. */
  error: string | null;
  latencyMs: number;
  /** Cut short because the worker is stopping: the attempt does not count. */
  aborted?: boolean;
  /** The start of the answer's body, when the post asked for it (keepAnswerBytes). */
  answerBody?: string;
}

function describeFailure(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const found = error instanceof NonPublicTargetError ? error : cause instanceof NonPublicTargetError ? cause : null;
  if (found) return `refused: ${found.message}`;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

const textOf = (bytes: Buffer, limit: number): string => bytes.subarray(0, limit).toString('utf8');

/** Where a webhook URL points, parsed and checked once per URL rather than once per report. */
interface Destination {
  origin: string;
  /** Path and query. */
  path: string;
  /** Why the URL is refused under the transport's settings, if it is. */
  problem: string | null;
}

/** Receiver URLs whose parse and check are kept: far more than a process has keys with webhooks. */
const DESTINATION_CACHE_SIZE = 1024;

/** How much later than an attempt's deadline undici's own timeouts fall (see the agent's settings). */
const UNDICI_BACKSTOP_MARGIN_MS = 1000;

const isSuccess = (statusCode: number): boolean => statusCode >= 200 && statusCode < 300;

/**
 * One POST as undici's dispatch handler: no response object, body stream, promise or AbortSignal
 * per report (they cost more than the rest of the request). It reads at most
 * RESPONSE_READ_LIMIT_BYTES of the answer, keeps only the bytes the answer needs, and settles
 * once: with the answer, at the deadline, or when the transport stops.
 */
class WebhookAttempt implements Dispatcher.DispatchHandler {
  readonly #started = performance.now();
  readonly #input: WebhookPost;
  readonly #settle: (answer: WebhookAnswer) => void;
  readonly #deadline: NodeJS.Timeout;
  #controller: Dispatcher.DispatchController | null = null;
  #settled = false;
  #statusCode = 0;
  #keepBytes = 0;
  #kept: Buffer[] = [];
  #keptBytes = 0;
  #readBytes = 0;

  constructor(input: WebhookPost, timeoutMs: number, settle: (answer: WebhookAnswer) => void) {
    this.#input = input;
    this.#settle = settle;
    this.#deadline = setTimeout(() => this.#stop(`timeout: no answer within ${timeoutMs} ms`, false), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Settled while it waited for a pooled connection: it must not be written at all.
    if (this.#settled) controller.abort(new Error('the attempt ended before a connection was free'));
    else this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // 1xx interim answers are followed by the real one.
    if (statusCode < 200) return;
    this.#statusCode = statusCode;
    const asked = this.#input.keepAnswerBytes;
    // A 2xx status is the acknowledgement; a refusal's start goes into the attempt log.
    this.#keepBytes = isSuccess(statusCode) ? (asked ?? 0) : Math.max(ERROR_BODY_EXCERPT_CHARS, asked ?? 0);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#readBytes += chunk.length;
    if (this.#keptBytes < this.#keepBytes) {
      this.#kept.push(chunk);
      this.#keptBytes += chunk.length;
    }
    if (this.#readBytes > RESPONSE_READ_LIMIT_BYTES) {
      // Enough: a receiver cannot make us read (or buffer) a large answer; its connection is dropped.
      this.#answer();
      controller.abort(new Error(`answer longer than ${RESPONSE_READ_LIMIT_BYTES} bytes`));
    }
  }

  onResponseEnd(): void {
    this.#answer();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  /** The request failed (or could not be dispatched at all). */
  fail(error: Error): void {
    // The status had arrived when the body broke off: the receiver answered.
    if (this.#statusCode !== 0) this.#answer();
    else this.#finish({ statusCode: null, error: describeFailure(error), latencyMs: this.#elapsed() });
  }

  /** The transport stops: cut short, and the attempt does not count unless the status had arrived. */
  abortForStop(): void {
    this.#stop('aborted: the worker is stopping', true);
  }

  #stop(reason: string, aborted: boolean): void {
    if (this.#settled) return;
    if (this.#statusCode !== 0) this.#answer();
    else this.#finish({ statusCode: null, error: reason, latencyMs: this.#elapsed(), ...(aborted ? { aborted } : {}) });
    this.#controller?.abort(new Error(reason));
  }

  #answer(): void {
    const statusCode = this.#statusCode;
    const keep = this.#input.keepAnswerBytes;
    const start = this.#kept.length === 1 ? this.#kept[0]! : Buffer.concat(this.#kept);
    let error: string | null = null;
    if (!isSuccess(statusCode)) {
      const excerpt = start.toString('utf8').slice(0, ERROR_BODY_EXCERPT_CHARS).trim();
      error = `HTTP ${statusCode}${excerpt ? `: ${excerpt}` : ''}`;
    }
    const answer: WebhookAnswer = { statusCode, error, latencyMs: this.#elapsed() };
    this.#finish(keep === undefined ? answer : { ...answer, answerBody: textOf(start, keep) });
  }

  #finish(answer: WebhookAnswer): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#deadline);
    this.#settle(answer);
  }

  #elapsed(): number {
    return Math.round(performance.now() - this.#started);
  }
}

export class WebhookTransport {
  private readonly agent: OnDemandAgent;
  /** Requests in flight, so abortAll() can cut them short. */
  private readonly inFlight = new Set<WebhookAttempt>();
  private readonly destinations = new Map<string, Destination>();
  private stopped = false;

  constructor(private readonly settings: WebhookTransportSettings) {
    this.agent = new OnDemandAgent({
      connections: settings.connectionsPerReceiver,
      keepAliveTimeout: 30_000,
      pipelining: 1,
      // Each attempt's own deadline ends it at timeoutMs and says so ("timeout: …"). undici's timers
      // are a backstop only: they count from a clock read up to half a second stale, so set to the
      // same value they sometimes fired first and logged the same timeout as UND_ERR_HEADERS_TIMEOUT.
      connectTimeout: settings.timeoutMs + UNDICI_BACKSTOP_MARGIN_MS,
      headersTimeout: settings.timeoutMs + UNDICI_BACKSTOP_MARGIN_MS,
      bodyTimeout: settings.timeoutMs + UNDICI_BACKSTOP_MARGIN_MS,
      connect: settings.allowPrivateTargets ? {} : { lookup: publicOnlyLookup },
    });
  }

  /**
   * One POST; never throws: every failure is an answer without a 2xx. After abortAll() it is cut
   * short (or not started): the answer then has `aborted: true`.
   */
  post(input: WebhookPost): Promise<WebhookAnswer> {
    // The URL was checked when it was configured; the settings or the URL may have changed since.
    const destination = this.destinationOf(input.url);
    if (destination.problem) return Promise.resolve({ statusCode: null, error: `refused: ${destination.problem}`, latencyMs: 0 });
    if (this.stopped) return Promise.resolve({ statusCode: null, error: 'aborted: the worker is stopping', latencyMs: 0, aborted: true });
    return new Promise<WebhookAnswer>((resolve) => {
      const attempt = new WebhookAttempt(input, this.settings.timeoutMs, (answer) => {
        this.inFlight.delete(attempt);
        resolve(answer);
      });
      this.inFlight.add(attempt);
      try {
        // A dispatch never follows redirects: a 3xx is an answer like any other non-2xx.
        this.agent.dispatch(
          { origin: destination.origin, path: destination.path, method: 'POST', headers: input.headers, body: input.body },
          attempt,
        );
      } catch (error) {
        attempt.fail(error as Error);
      }
    });
  }

  private destinationOf(url: string): Destination {
    let destination = this.destinations.get(url);
    if (destination) return destination;
    const problem = findWebhookUrlProblem(url, this.settings.allowPrivateTargets);
    if (problem) destination = { origin: '', path: '', problem };
    else {
      const parsed = new URL(url);
      destination = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}`, problem: null };
    }
    if (this.destinations.size >= DESTINATION_CACHE_SIZE) this.destinations.clear();
    this.destinations.set(url, destination);
    return destination;
  }

  /** Cuts every request in flight short, and refuses new ones (the end of a graceful stop). */
  abortAll(): void {
    this.stopped = true;
    for (const attempt of this.inFlight) attempt.abortForStop();
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
