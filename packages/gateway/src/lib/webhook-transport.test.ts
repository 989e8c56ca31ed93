import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonPublicTargetError, WebhookTransport, publicOnlyLookup } from './webhook-transport.ts';

function lookup(hostname: string, all: boolean): Promise<{ error: Error | null; address: unknown }> {
  return new Promise((resolve) => publicOnlyLookup(hostname, { all }, (error, address) => resolve({ error, address })));
}

describe('publicOnlyLookup (the connect-time DNS check)', () => {
  it('refuses a name or address that resolves to a non-public address, in both calling forms', async () => {
    for (const all of [false, true]) {
      for (const host of ['localhost', '127.0.0.1', '10.1.2.3', '::1']) {
        const { error } = await lookup(host, all);
        expect(error, host).toBeInstanceOf(NonPublicTargetError);
        expect(error!.message).toMatch(/non-public address/);
      }
    }
  });

  it('passes a public address on, as one address or as the list', async () => {
    expect(await lookup('8.8.8.8', false)).toEqual({ error: null, address: '8.8.8.8' });
    expect(await lookup('8.8.8.8', true)).toEqual({ error: null, address: [{ address: '8.8.8.8', family: 4 }] });
  });
});

describe('WebhookTransport', () => {
  let server: Server;
  let base: string;
  let slowRequests = 0;
  const transport = new WebhookTransport({ timeoutMs: 500, connectionsPerReceiver: 4, allowPrivateTargets: true });
  const guarded = new WebhookTransport({ timeoutMs: 500, connectionsPerReceiver: 4, allowPrivateTargets: false });

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        if (request.url === '/big-ok') response.writeHead(200).end('x'.repeat(4 * 1024 * 1024));
        else if (request.url === '/big-no') response.writeHead(503).end(`busy ${'y'.repeat(1024 * 1024)}`);
        else if (request.url === '/redirect') response.writeHead(307, { location: '/ok' }).end();
        else if (request.url === '/slow' && ++slowRequests) setTimeout(() => response.writeHead(200).end(), 2000);
        else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await transport.close();
    await guarded.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (path: string, on = transport) => on.post({ url: `${base}${path}`, body: Buffer.from('{}'), headers: { 'content-type': 'application/json' } });

  it('takes any 2xx as delivered, whatever the answer body', async () => {
    expect(await post('/ok')).toMatchObject({ statusCode: 204, error: null });
    expect(await post('/big-ok')).toMatchObject({ statusCode: 200, error: null });
  });

  it('keeps a short excerpt of a refusal, does not follow redirects, and times out', async () => {
    const refused = await post('/big-no');
    expect(refused.statusCode).toBe(503);
    expect(refused.error).toMatch(/^HTTP 503: busy y+$/);
    expect(refused.error!.length).toBeLessThanOrEqual('HTTP 503: '.length + 200);
    expect(await post('/redirect')).toMatchObject({ statusCode: 307, error: 'HTTP 307' });
    expect(await post('/slow')).toMatchObject({ statusCode: null, error: 'timeout: no answer within 500 ms' });
  });

  it('refuses private targets and other schemes before connecting unless allowed', async () => {
    expect(await post('/ok', guarded)).toMatchObject({ statusCode: null, latencyMs: 0, error: expect.stringMatching(/^refused: .*private/) });
    expect(await guarded.post({ url: 'ftp://example.com/x', body: Buffer.from(''), headers: {} })).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: .*http/) });
  });

  it('reports a connection error as an answer, and after abortAll() starts nothing', async () => {
    const closed = new WebhookTransport({ timeoutMs: 500, connectionsPerReceiver: 1, allowPrivateTargets: true });
    const answer = await closed.post({ url: 'http://127.0.0.1:9/none', body: Buffer.from('{}'), headers: {} });
    expect(answer).toMatchObject({ statusCode: null, error: expect.stringMatching(/ECONNREFUSED/) });
    closed.abortAll();
    expect(await closed.post({ url: `${base}/ok`, body: Buffer.from('{}'), headers: {} })).toMatchObject({ aborted: true });
    await closed.close();
  });

  it('cuts a request in flight short at abortAll(), and one still waiting for a connection never goes out', async () => {
    const stopping = new WebhookTransport({ timeoutMs: 5_000, connectionsPerReceiver: 1, allowPrivateTargets: true });
    const seenBefore = slowRequests;
    const inFlight = post('/slow', stopping);
    const waiting = post('/slow', stopping);
    await new Promise((resolve) => setTimeout(resolve, 200));
    stopping.abortAll();
    expect(await inFlight).toMatchObject({ statusCode: null, aborted: true, error: 'aborted: the worker is stopping' });
    expect(await waiting).toMatchObject({ statusCode: null, aborted: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(slowRequests - seenBefore).toBe(1);
    await stopping.close();
  });

  it('hands back the start of the answer when asked, and the refusal excerpt even when not', async () => {
    const asked = await transport.post({ url: `${base}/big-ok`, body: Buffer.from('{}'), headers: {}, keepAnswerBytes: 10 });
    expect(asked).toMatchObject({ statusCode: 200, error: null, answerBody: 'xxxxxxxxxx' });
    const refused = await transport.post({ url: `${base}/big-no`, body: Buffer.from('{}'), headers: {}, keepAnswerBytes: 4 });
    expect(refused).toMatchObject({ statusCode: 503, answerBody: 'busy', error: expect.stringMatching(/^HTTP 503: busy y{195}$/) });
  });
});
