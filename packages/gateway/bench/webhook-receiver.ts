/**
 * The benchmark's customer receiver: answers every report at once (200), after checking its
 * X-Gateway-Signature over the raw bytes with the API key (HMAC-SHA256, timing-safe compare), and
 * counts each message_id once (a real receiver is idempotent by message_id).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BenchReceiver {
  readonly url: string;
  /** The key the reports must be signed with (set once the key exists). */
  apiKey: string;
  readonly stats: { requests: number; unique: number; duplicates: number; badSignatures: number; firstAt: number | null; lastNewAt: number | null };
  /** message_ids reported (verified) so far. */
  readonly seen: Set<string>;
  /** Resolves when `count` distinct message_ids have been reported, or rejects after `timeoutMs`. */
  waitForUnique(count: number, timeoutMs: number, progress?: (unique: number) => void): Promise<void>;
  close(): Promise<void>;
}

export async function startBenchReceiver(): Promise<BenchReceiver> {
  const seen = new Set<string>();
  const stats: BenchReceiver['stats'] = { requests: 0, unique: 0, duplicates: 0, badSignatures: 0, firstAt: null, lastNewAt: null };
  const receiver = { apiKey: '' } as { apiKey: string };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      stats.requests += 1;
      const presented = Buffer.from(String(request.headers['x-gateway-signature'] ?? ''));
      const expected = Buffer.from(createHmac('sha256', receiver.apiKey).update(raw).digest('hex'));
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
        stats.badSignatures += 1;
        response.writeHead(401).end();
        return;
      }
      const messageId = (JSON.parse(raw.toString('utf8')) as { message_id: string }).message_id;
      const now = performance.now();
      stats.firstAt ??= now;
      if (seen.has(messageId)) stats.duplicates += 1;
      else {
        seen.add(messageId);
        stats.unique += 1;
        stats.lastNewAt = now;
      }
      response.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dlr`;
  return {
    url,
    get apiKey() {
      return receiver.apiKey;
    },
    set apiKey(value: string) {
      receiver.apiKey = value;
    },
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
