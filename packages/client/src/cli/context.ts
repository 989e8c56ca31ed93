/** What every CLI command gets: output streams, the output mode and a client built from flags or environment. */
import { Client } from '../client.ts';
import type { Io } from './output.ts';

/** Exit codes: 0 success, 1 the operation failed (or some recipients did), 2 the command line or input file is wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A mistake in the command line or the input: exit code 2, nothing was sent. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface CliContext {
  io: Io;
  /** `--json`: one JSON document on stdout, for scripts. */
  json: boolean;
  apiKey(): string;
  client(): Client;
  /** Writes a result: JSON as is with --json, otherwise the human text. */
  print(result: unknown, human: () => string): void;
}

export function createContext(io: Io, options: { json: boolean; apiKey?: string; baseUrl?: string; timeoutMs?: number }): CliContext {
  let client: Client | null = null;
  const apiKey = () => {
    if (!options.apiKey) throw new UsageError('no API key: pass --api-key or set TMS_API_KEY');
    return options.apiKey;
  };
  return {
    io,
    json: options.json,
    apiKey,
    client: () => {
      if (client) return client;
      const key = apiKey();
      if (!options.baseUrl) throw new UsageError('no service address: pass --base-url or set TMS_BASE_URL');
      if (!/^https?:\/\//.test(options.baseUrl)) throw new UsageError(`--base-url must start with http:// or https:// (got ${options.baseUrl})`);
      client = new Client({
        apiKey: key,
        baseUrl: options.baseUrl,
        timeoutMs: options.timeoutMs,
        onRetry: (event) =>
          io.stderr.write(`retrying ${event.method} ${event.path} in ${event.delayMs} ms (attempt ${event.attempt} failed: ${event.error.message})\n`),
      });
      return client;
    },
    print: (result, human) => {
      io.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : human());
    },
  };
}
