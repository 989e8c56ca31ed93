/**
 * The benchmark's customer receivers. Both answer every callback at once and count each message
 * once (a real receiver is idempotent by message id), so the two gateways are timed against the
 * same kind of server (Node's http, keep-alive, in the benchmark process):
 * - `startBenchReceiver`: our delivery reports, POSTs whose X-Gateway-Signature is checked over the
 *   raw bytes with the API key (HMAC-SHA256, timing-safe compare), counted by `message_id`;
 * - `startDlrReceiver`: Kannel's delivery callbacks, unsigned GETs to the `dlr-url` the benchmark
 *   put in each message, counted by the `id` query parameter it chose.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceiverStats {
  requests: number;
  unique: number;
  duplicates: number;
  /** Callbacks refused: a bad signature (reports) or not a final-delivery success (Kannel). */
  rejected: number;
  firstAt: number | null;
  lastNewAt: number | null;
}

export interface CountingReceiver {
  readonly url: string;
  readonly stats: ReceiverStats;
  /** Message ids reported (and accepted) so far. */
  readonly seen: Set<string>;
  /** Resolves when `count` distinct message ids have been reported, or rejects after `timeoutMs`. */
  waitForUnique(count: number, timeoutMs: number, progress?: (unique: number) => void): Promise<void>;
  close(): Promise<void>;
}

export interface BenchReceiver extends CountingReceiver {
  /** The key the reports must be signed with (set once the key exists). */
  apiKey: string;
}

/** A callback's verdict: the message id it reports, or why it is refused. */
type Verdict = { messageId: string } | { refuse: number };

async function startCountingServer(path: string, judge: (request: IncomingMessage, raw: Buffer) => Verdict): Promise<CountingReceiver> {
  const seen = new Set<string>();
  const stats: ReceiverStats = { requests: 0, unique: 0, duplicates: 0, rejected: 0, firstAt: null, lastNewAt: null };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      stats.requests += 1;
      const verdict = judge(request, Buffer.concat(chunks));
      if ('refuse' in verdict) {
        stats.rejected += 1;
        response.writeHead(verdict.refuse, { 'content-length': '0' }).end();
        return;
      }
      const now = performance.now();
      stats.firstAt ??= now;
      if (seen.has(verdict.messageId)) stats.duplicates += 1;
      else {
        seen.add(verdict.messageId);
        stats.unique += 1;
        stats.lastNewAt = now;
      }
      response.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    stats,
    seen,
    waitForUnique: async (count, timeoutMs, progress) => {
      const deadline = performance.now() + timeoutMs;
      let lastSay = performance.now();
      while (stats.unique < count) {
        if (performance.now() > deadline) throw new Error(`timed out: ${stats.unique} of ${count} reports after ${timeoutMs / 1000} s (${JSON.stringify(stats)})`);
        if (progress && performance.now() - lastSay > 5000) {
          progress(stats.unique);
          lastSay = performance.now();
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startBenchReceiver(): Promise<BenchReceiver> {
  let apiKey = '';
  const receiver = await startCountingServer('/dlr', (request, raw) => {
    const presented = Buffer.from(String(request.headers['x-gateway-signature'] ?? ''));
    const expected = Buffer.from(createHmac('sha256', apiKey).update(raw).digest('hex'));
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return { refuse: 401 };
    return { messageId: (JSON.parse(raw.toString('utf8')) as { message_id: string }).message_id };
  });
  // A spread keeps the same stats and seen objects, which the server goes on updating.
  return {
    ...receiver,
    get apiKey() {
      return apiKey;
    },
    set apiKey(value: string) {
      apiKey = value;
    },
  };
}

/**
 * Kannel's callbacks: `GET <url>?id=<our id>&status=<%d>`. Kannel substitutes `%d` with the delivery
 * report's type; 1 is the final delivery success, the one report a message should get here.
 */
export async function startDlrReceiver(): Promise<CountingReceiver> {
  return startCountingServer('/kannel-dlr', (request) => {
    const query = new URL(request.url ?? '/', 'http://receiver').searchParams;
    const id = query.get('id');
    if (!id || query.get('status') !== '1') return { refuse: 400 };
    return { messageId: id };
  });
}
