import { Agent, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { closeServer } from './close-server.ts';
import { registerClosing } from './plugins/closing.ts';

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    response.once('end', () => resolve(text));
  });
}

// A hang here is the failure: the test's own time limit is far below the keep-alive timeout.
it('closes once an answer whose headers went out before the close has ended, without waiting out keep-alive', { timeout: 20_000 }, async () => {
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
  const text = readBody(response);
  const socketClosed = new Promise<void>((resolve) => response.socket.once('close', () => resolve()));

  const closed = closeServer(app);
  // The answer ends only once the server has stopped listening, its connections no longer idle then closed.
  while (app.server.listening) await new Promise((resolve) => setImmediate(resolve));
  body.end('last,row\n');
  expect(await text).toBe('first,row\nlast,row\n');
  await socketClosed;
  await closed;
  agent.destroy();
});
