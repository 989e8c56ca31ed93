import { Agent, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { expect, it } from 'vitest';
import { closeServer } from './close-server.ts';
import { ARRIVING_REQUEST_GRACE_MS, registerClosing } from './plugins/closing.ts';
import { clientErrorAnswerer } from './plugins/protocol-errors.ts';
import { trickle } from '../../test/api/raw-http.ts';

/** Reads the whole body, pausing the socket at first so the server's last bytes wait in its buffers. */
function readSlowly(response: IncomingMessage, pauseMs: number): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    response.on('data', (chunk: Buffer) => (bytes += chunk.length));
    response.once('end', () => resolve(bytes));
    response.pause();
    setTimeout(() => response.resume(), pauseMs);
  });
}

/** Larger than the socket buffers: the end of the answer is still in the server's memory when it has ended. */
const LAST_PART_BYTES = 16 * 1024 * 1024;

// A hang here is the failure: the test's own time limit is far below the keep-alive timeout.
it('closes once an answer that began before the close has gone out in full, without waiting out keep-alive', { timeout: 20_000 }, async () => {
  const app = Fastify({ keepAliveTimeout: 72_000 });
  registerClosing(app);
  const body = new PassThrough();
  app.get('/export', async (_request, reply) => reply.header('content-type', 'text/csv').send(body));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;

  const agent = new Agent({ keepAlive: true });
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const pending = request({ host: '127.0.0.1', port, path: '/export', agent }, resolve);
    pending.once('error', reject);
    pending.end();
    body.write('first,row\n');
  });
  // The answer began before the close: it carries no Connection: close, so only the server can end the connection.
  expect(response.headers.connection).toBe('keep-alive');
  const received = readSlowly(response, 500);
  const socketClosed = new Promise<void>((resolve) => response.socket.once('close', () => resolve()));

  const closed = closeServer(app);
  // The answer ends only once the server has stopped listening, its connections no longer idle then closed.
  while (app.server.listening) await new Promise((resolve) => setImmediate(resolve));
  body.end(Buffer.alloc(LAST_PART_BYTES, 'x'));
  // A slow reader still gets every byte: the connection is not cut while the end is on its way.
  expect(await received).toBe('first,row\n'.length + LAST_PART_BYTES);
  await socketClosed;
  await closed;
  agent.destroy();
});

it('closes connections whose request is still arriving after a grace, answering a trickling body 408, while a request being handled finishes', { timeout: 20_000 }, async () => {
  const app = Fastify({ clientErrorHandler: clientErrorAnswerer(pino({ level: 'silent' })) });
  registerClosing(app);
  let enterHandler!: () => void;
  const inHandler = new Promise<void>((resolve) => (enterHandler = resolve));
  let finishHandler!: () => void;
  const handlerMayFinish = new Promise<void>((resolve) => (finishHandler = resolve));
  app.post('/slow', async () => {
    enterHandler();
    await handlerMayFinish;
    return { done: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  // Raw connections that send these bytes and nothing more, each resolving with what the server sent once it closed.
  const handled = trickle(url, 'POST /slow HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', '');
  await inHandler;
  const tricklingBody = trickle(url, 'POST /slow HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a"', '');
  const unfinishedHeaders = trickle(url, 'POST /slow HTTP/1.1\r\nHost: test\r\n', '');
  // Let the server read both before it closes.
  await new Promise((resolve) => setTimeout(resolve, 200));

  const closeStarted = Date.now();
  let closeEnded = false;
  const closed = closeServer(app).then(() => (closeEnded = true));
  const cutAnswer = await tricklingBody;
  expect(Date.now() - closeStarted).toBeGreaterThanOrEqual(ARRIVING_REQUEST_GRACE_MS - 100);
  expect(cutAnswer).toMatch(/^HTTP\/1\.1 408 /);
  expect(JSON.parse(cutAnswer.slice(cutAnswer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 408, type: 'request_timeout' } });
  expect(await unfinishedHeaders).toBe('');

  // The request being handled was left alone, and the close waits for it.
  expect(closeEnded).toBe(false);
  finishHandler();
  const handledAnswer = await handled;
  expect(handledAnswer).toMatch(/^HTTP\/1\.1 200 /);
  expect(handledAnswer).toContain('{"done":true}');
  await closed;
});
