/**
 * SIGTERM while a client's request is still in flight on a keep-alive connection: the request is
 * answered, with Connection: close (the answer starts after the stop began), the connection is
 * closed, and `tms start` exits 0 soon after. Left open, an idle keep-alive connection would hold
 * the stop for the whole keep-alive timeout (72 s), past the 30 s stop deadline that exits 1; an
 * answer that had started before the stop is src/http/close-server.test.ts's case. A client whose
 * request is still arriving a few seconds into the stop is answered 408 and let go. A real
 * `tms start` child process on SQLite: the HTTP server's stop is the same code on both stores.
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { trickle } from '../api/raw-http.ts';
import { createTestDatabase, freePort, gatewayEnvironment, type TestDatabase } from '../harness.ts';
import { killAllTms, startTms } from './processes.ts';

let database: TestDatabase | undefined;

afterEach(async () => {
  await killAllTms();
  await database?.drop();
  database = undefined;
});

it('answers a request in flight at SIGTERM, closes its keep-alive connection and exits 0', { timeout: 90_000 }, async () => {
  database = await createTestDatabase('sqlite');
  const port = await freePort();
  const env = gatewayEnvironment(database, {
    PORT: String(port),
    TMS_LOG_LEVEL: 'info',
    // Its "incoming request" line tells when the request has reached the gateway.
    TMS_ACCESS_LOG: 'true',
  });
  const tms = startTms(['start'], env);
  await tms.waitForOutput('"msg":"tms started"');

  // The request's headers go out now and its body only after the SIGTERM: it is in flight throughout.
  const body = JSON.stringify({ name: 'Created during shutdown' });
  const agent = new Agent({ keepAlive: true });
  const pending = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/admin/v1/workspaces',
    agent,
    headers: { authorization: `Bearer ${env.TMS_ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    pending.once('response', resolve);
    pending.once('error', reject);
  });
  const socketClosed = new Promise<void>((resolve) => pending.once('socket', (socket) => socket.once('close', () => resolve())));
  pending.flushHeaders();
  await tms.waitForOutput('"msg":"incoming request"');

  tms.child.kill('SIGTERM');
  await tms.waitForOutput('shutting down');
  pending.end(body);

  const response = await answered;
  const text = await new Promise<string>((resolve) => {
    let received = '';
    response.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    response.once('end', () => resolve(received));
  });
  expect(response.statusCode, text).toBe(201);
  expect(JSON.parse(text)).toMatchObject({ name: 'Created during shutdown' });
  await socketClosed;
  expect(await tms.exited, tms.stdout()).toEqual({ code: 0, signal: null });
  agent.destroy();
});

it('cuts a request whose body is still trickling in a few seconds into the stop, answering it 408, and exits 0', { timeout: 90_000 }, async () => {
  database = await createTestDatabase('sqlite');
  const port = await freePort();
  const env = gatewayEnvironment(database, { PORT: String(port), TMS_LOG_LEVEL: 'info', TMS_ACCESS_LOG: 'true' });
  const tms = startTms(['start'], env);
  await tms.waitForOutput('"msg":"tms started"');

  // Node stops its own request timeout once the server closes: left alone, this client would hold
  // the stop until the deadline, which exits 1. Its body would take 30 s to arrive in full.
  const head = `POST /admin/v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${env.TMS_ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"name":`;
  const answer = trickle(`http://127.0.0.1:${port}`, head, ' '.repeat(150));
  await tms.waitForOutput('"msg":"incoming request"');

  tms.child.kill('SIGTERM');
  const received = await answer;
  expect(received).toMatch(/^HTTP\/1\.1 408 /);
  expect(received).toContain('"type":"request_timeout"');
  expect(await tms.exited, tms.stdout()).toEqual({ code: 0, signal: null });
  expect(tms.stdout()).toContain('closed the connections whose request was still arriving');
});
