/**
 * Outgoing webhook requests: keep-alive pools per receiver, a whole-attempt time limit, no
 * redirects, at most a small part of the answer read, and (unless private targets are allowed)
 * every connection's DNS answer checked against the non-public ranges at connect time, so a name
 * that passed the URL check cannot be re-pointed at an internal address later (DNS rebinding).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, request, type Dispatcher } from 'undici';
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

function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: unknown } | null)?.cause;
  const found = error instanceof NonPublicTargetError ? error : cause instanceof NonPublicTargetError ? cause : null;
  if (found) return `refused: ${found.message}`;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Reads at most RESPONSE_READ_LIMIT_BYTES of an answer; returns (at least) its first `keepBytes` bytes. */
async function readStart(body: Dispatcher.ResponseData['body'], keepBytes: number): Promise<Buffer> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (keptBytes < keepBytes) {
      kept.push(chunk);
      keptBytes += chunk.length;
    }
    if (size > RESPONSE_READ_LIMIT_BYTES) {
      // Enough: a receiver cannot make us read (or buffer) a large answer.
      body.destroy();
      break;
    }
  }
  return Buffer.concat(kept);
}

const textOf = (bytes: Buffer, limit: number): string => bytes.subarray(0, limit).toString('utf8');

export class WebhookTransport {
  private readonly agent: Agent;
  /** Requests in flight, so abortAll() can cut them short (one listener per request would cost more). */
  private readonly inFlight = new Set<AbortController>();
  private stopped = false;

  constructor(private readonly settings: WebhookTransportSettings) {
    this.agent = new Agent({
      connections: settings.connectionsPerReceiver,
      keepAliveTimeout: 30_000,
      pipelining: 1,
      connectTimeout: settings.timeoutMs,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      connect: settings.allowPrivateTargets ? {} : { lookup: publicOnlyLookup },
    });
  }

  /**
   * One POST; never throws: every failure is an answer without a 2xx. After abortAll() it is cut
   * short (or not started): the answer then has `aborted: true`.
   */
  async post(input: WebhookPost): Promise<WebhookAnswer> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // The URL was checked when it was configured; the settings or the URL may have changed since.
    const problem = findWebhookUrlProblem(input.url, this.settings.allowPrivateTargets);
    if (problem) return { statusCode: null, error: `refused: ${problem}`, latencyMs: 0 };
    if (this.stopped) return { statusCode: null, error: 'aborted: the worker is stopping', latencyMs: 0, aborted: true };
    const abort = new AbortController();
    this.inFlight.add(abort);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.settings.timeoutMs);
    try {
      // undici's request() never follows redirects: a 3xx is an answer like any other non-2xx.
      const response = await request(input.url, {
        method: 'POST',
        headers: input.headers,
        body: input.body,
        dispatcher: this.agent,
        signal: abort.signal,
      });
      const statusCode = response.statusCode;
      const keep = input.keepAnswerBytes;
      if (statusCode >= 200 && statusCode < 300) {
        if (keep !== undefined) {
          const start = await readStart(response.body, keep).catch(() => Buffer.alloc(0));
          return { statusCode, error: null, latencyMs: elapsed(), answerBody: textOf(start, keep) };
        }
        // The 2xx status is the acknowledgement; the body is read (up to the limit) only so the
        // keep-alive connection can be reused, and a body that never ends does not undo it.
        await response.body.dump({ limit: RESPONSE_READ_LIMIT_BYTES }).catch(() => undefined);
        return { statusCode, error: null, latencyMs: elapsed() };
      }
      const start = await readStart(response.body, Math.max(ERROR_BODY_EXCERPT_CHARS, keep ?? 0)).catch(() => Buffer.alloc(0));
      const excerpt = start.toString('utf8').slice(0, ERROR_BODY_EXCERPT_CHARS).trim();
      const answer: WebhookAnswer = { statusCode, error: `HTTP ${statusCode}${excerpt ? `: ${excerpt}` : ''}`, latencyMs: elapsed() };
      return keep === undefined ? answer : { ...answer, answerBody: textOf(start, keep) };
    } catch (error) {
      if (this.stopped && !timedOut) return { statusCode: null, error: 'aborted: the worker is stopping', latencyMs: elapsed(), aborted: true };
      return { statusCode: null, error: describeFailure(error, timedOut, this.settings.timeoutMs), latencyMs: elapsed() };
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(abort);
    }
  }

  /** Cuts every request in flight short, and refuses new ones (the end of a graceful stop). */
  abortAll(): void {
    this.stopped = true;
    for (const abort of this.inFlight) abort.abort();
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
