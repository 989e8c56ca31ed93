/**
 * One HTTP exchange over a plain TCP socket, for requests fetch cannot express (a malformed request
 * line, an invalid percent-encoding kept as sent, an Expect header, no Host, a body that trickles
 * in) and for reading exactly the bytes a server sends (a HEAD answer must end with its headers).
 */
import { connect } from 'node:net';
import type { TestResponse } from '../harness.ts';

export interface RawResponse extends TestResponse {
  /** Everything after the blank line that ends the headers, as received. */
  bodyBytes: string;
}

/** Sends `head` (request line and headers, without the blank line) and an optional body; reads until the server closes. */
export function rawHttp(baseUrl: string, head: string, body = ''): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(`${head}\r\n\r\n${body}`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Writes `head`, then one byte of `trickle` every 200 ms, and resolves with what the server sent once it closes. */
export function trickle(url: string, head: string, trickleText: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= trickleText.length || socket.destroyed) return clearInterval(timer);
      socket.write(trickleText[sent]!);
      sent += 1;
    }, 200);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete HTTP response: ${JSON.stringify(text)}`);
  const [statusLine = '', ...headerLines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${statusLine}`);
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const bodyBytes = text.slice(end + 4);
  let body: unknown;
  try {
    body = bodyBytes === '' ? undefined : JSON.parse(bodyBytes);
  } catch {
    body = undefined;
  }
  return { status, headers, body, text, bodyBytes };
}

/** A request head with Host and Connection: close, so the server ends the exchange. */
export function requestHead(method: string, path: string, headers: Record<string, string> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: gateway.test', 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return lines.join('\r\n');
}
