/**
 * Slow clients and response headers: a body or headers that trickle in are cut off with 408 in the
 * error envelope (a connection cannot be held open forever), and every API answer tells browsers
 * and caches not to sniff or keep it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { expectStatus, walletOf } from './helpers.ts';
import { trickle } from './raw-http.ts';

function errorOf(answer: string): { status: number; body: { error: { code: number; type: string } } } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: JSON.parse(body) };
}

describe.each(STORE_KINDS)('slow clients and response headers (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { env: { TMS_HTTP_REQUEST_TIMEOUT_MS: '1500', TMS_HTTP_HEADERS_TIMEOUT_MS: '1000' } });
    workspace = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  it('cuts off a send whose body trickles in, with 408 request_timeout, and charges nothing', async () => {
    const before = await walletOf(gateway, workspace.workspaceId);
    const body = JSON.stringify({ template_id: workspace.templateId, phone: '0912345678', template_data: { name: 'An', code: 'A1' } });
    const head = `POST /api/v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${workspace.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const answer = errorOf(await trickle(gateway.url, head, body));
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatchObject({ code: 408, type: 'request_timeout' });
    expect((await walletOf(gateway, workspace.workspaceId)).balance).toBe(before.balance);
  });

  it('cuts off headers that never end, with 408 request_timeout', async () => {
    const answer = errorOf(await trickle(gateway.url, 'GET /api/v1/templates HTTP/1.1\r\nHost: x\r\n', 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'));
    expect(answer.status).toBe(408);
    expect(answer.body.error.type).toBe('request_timeout');
  });

  it('marks API answers, errors included, as not to be cached or sniffed', async () => {
    const ok = await gateway.request('GET', '/api/v1/templates', { key: workspace.apiKey });
    expectStatus(ok, 200);
    const refused = await gateway.request('GET', '/api/v1/templates', { key: 'wrong' });
    const unknown = await gateway.request('GET', '/api/v1/nowhere', { key: workspace.apiKey });
    const badPath = await gateway.request('GET', '/api/v1/messages/%ED%A0%80', { key: workspace.apiKey });
    for (const response of [ok, refused, unknown, badPath]) {
      expect(response.headers.get('x-content-type-options'), response.text).toBe('nosniff');
      expect(response.headers.get('cache-control'), response.text).toBe('no-store');
    }
  });
});
