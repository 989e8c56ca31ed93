/**
 * `tms-client listen --port N`: a local delivery-report receiver for development. It verifies each
 * request's X-Gateway-Signature against the API key on the raw body, prints the report, and answers
 * as the contract asks (2xx for a good report, 401 for a bad signature).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookError, parseDeliveryReport, SIGNATURE_HEADER } from '../webhook.ts';
import { EXIT_OK, type CliContext } from './context.ts';
import { integerOption, stringOption, type Values } from './commands.ts';

/** The contract's reports are small; refuse anything that is clearly not one. */
const MAX_BODY_BYTES = 1024 * 1024;

function readRawBody(request: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function listenCommand(ctx: CliContext, _positionals: string[], values: Values, stop?: AbortSignal): Promise<number> {
  const apiKey = ctx.apiKey();
  const port = integerOption(values, 'port', 0, 65535) ?? 8787;
  const host = stringOption(values, 'host') ?? '127.0.0.1';
  const seen = new Set<string>();

  const server = createServer((request, response) => {
    if (request.method !== 'POST') return answer(response, 405, { error: 'POST delivery reports here' });
    readRawBody(request).then(
      async (raw) => {
        if (raw === null) return answer(response, 413, { error: 'body too large' });
        try {
          const report = await parseDeliveryReport(raw, request.headers[SIGNATURE_HEADER], apiKey);
          const duplicate = seen.has(report.message_id);
          seen.add(report.message_id);
          if (ctx.json) ctx.io.stdout.write(`${JSON.stringify({ ...report, duplicate })}\n`);
          else {
            ctx.io.stdout.write(
              `delivered ${report.message_id} to ${report.to ?? '(RSA)'} from OA ${report.from} at ${report.delivered_at}` +
                ` (tracking_id ${report.client_req_id}, platform id ${report.tracking_id})${duplicate ? ' [duplicate]' : ''}\n`,
            );
          }
          answer(response, 200, { ok: true });
        } catch (error) {
          if (!(error instanceof WebhookError)) throw error;
          ctx.io.stderr.write(`refused a request from ${request.socket.remoteAddress}: ${error.message} (answered ${error.status})\n`);
          answer(response, error.status, { error: error.message });
        }
      },
      () => answer(response, 400, { error: 'could not read the body' }),
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  ctx.io.stderr.write(`listening on http://${host}:${address.port} for delivery reports (signatures checked with the API key); Ctrl-C to stop\n`);

  await new Promise<void>((resolve) => {
    const close = () => server.close(() => resolve());
    if (stop) {
      if (stop.aborted) close();
      else stop.addEventListener('abort', close, { once: true });
    }
    process.once('SIGINT', close);
    process.once('SIGTERM', close);
  });
  return EXIT_OK;
}
