/** Transport: body limits, content types, malformed JSON, unknown routes, HEAD, rate limits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { createKey, expectError, expectStatus, listAll } from './helpers.ts';
import { rawHttp, requestHead } from './raw-http.ts';

describe.each(STORE_KINDS)('transport errors (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  it('is 413 for a body over 1 MiB, and stores nothing', async () => {
    const body = JSON.stringify({ template_id: ws.templateId, phone: '0912345678', template_data: { name: 'x'.repeat(1024 * 1024), code: 'A' } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024);
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody: body, headers: { 'content-type': 'application/json' } });
    expectError(response, 'payload_too_large');
    const batch = await gateway.request('POST', '/api/v1/messages/batch', {
      key: ws.apiKey,
      rawBody: JSON.stringify({ template_id: ws.templateId, recipients: [{ phone: '0912345678', template_data: { name: 'y'.repeat(1_100_000) } }] }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(batch, 'payload_too_large');
    expect(await listAll(gateway, ws)).toEqual([]);
  });

  it('accepts a body just under 1 MiB (and judges it on its content)', async () => {
    const padding = 'x'.repeat(1024 * 1024 - 200);
    const response = await gateway.request('POST', '/api/v1/messages/send', {
      key: ws.apiKey,
      body: { template_id: ws.templateId, phone: '0912345678', template_data: { name: padding, code: 'A' } },
    });
    expectError(response, 'invalid_template_data');
  });

  it.each([
    ['text/plain', 'template_id=x'],
    ['application/x-www-form-urlencoded', 'template_id=x&phone=0912345678'],
    ['application/xml', '<send/>'],
    ['application/octet-stream', '\u0001\u0002'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'],
  ])('is 415 for a %s body', async (contentType, rawBody) => {
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody, headers: { 'content-type': contentType } });
    expectError(response, 'unsupported_media_type');
  });

  it('is 415 for a JSON text sent as text/plain', async () => {
    const rawBody = JSON.stringify({ template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA });
    expectError(await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody, headers: { 'content-type': 'text/plain' } }), 'unsupported_media_type');
    expect(await listAll(gateway, ws)).toEqual([]);
  });

  it('accepts application/json with a charset', async () => {
    const rawBody = JSON.stringify({ template_id: ws.templateId, phone: '0912345678', template_data: VALID_DATA });
    const response = await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expectStatus(response, 202);
  });

  it.each(['{"template_id": "x",', '{template_id: "x"}', "{'a': 1}", 'nul', '{"a":1}}'])('is 400 for malformed JSON %j', async (rawBody) => {
    expectError(await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody, headers: { 'content-type': 'application/json' } }), 'invalid_json');
  });

  it.each(['[]', '"text"', '42', 'null'])('is 400 for a JSON body that is not an object: %s', async (rawBody) => {
    expectError(await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody, headers: { 'content-type': 'application/json' } }), 'invalid_request');
  });

  it('is 400 for a POST with no body at all', async () => {
    expectError(await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey }), 'invalid_request');
    expectError(await gateway.request('POST', '/api/v1/messages/batch', { key: ws.apiKey, rawBody: '', headers: { 'content-type': 'application/json' } }), 'invalid_request');
  });

  it('refuses prototype pollution attempts with 400', async () => {
    const rawBody = '{"template_id":"x","phone":"0912345678","__proto__":{"admin":true}}';
    expectError(await gateway.request('POST', '/api/v1/messages/send', { key: ws.apiKey, rawBody, headers: { 'content-type': 'application/json' } }), 'invalid_json');
  });

  it.each([
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v2/messages'],
    ['POST', '/api/v1/messages/send/extra'],
    ['DELETE', '/api/v1/messages'],
    ['PUT', '/api/v1/messages/send'],
    ['GET', '/'],
  ])('is 404 in the error shape for %s %s', async (method, path) => {
    expectError(await gateway.request(method, path, { key: ws.apiKey }), 'route_not_found');
    expectError(await gateway.request(method, path), 'route_not_found');
  });

  it('keeps a safe caller X-Request-Id and makes one otherwise', async () => {
    const given = await gateway.request('GET', '/api/v1/oas', { key: ws.apiKey, headers: { 'x-request-id': 'client-req.123' } });
    expect(given.headers.get('x-request-id')).toBe('client-req.123');
    const unsafe = await gateway.request('GET', '/api/v1/oas', { key: ws.apiKey, headers: { 'x-request-id': 'bad id with spaces' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^\S+$/);
    expect(unsafe.headers.get('x-request-id')).not.toBe('bad id with spaces');
    const a = await gateway.request('GET', '/api/v1/oas', { key: ws.apiKey });
    const b = await gateway.request('GET', '/api/v1/oas', { key: ws.apiKey });
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('answers HEAD on a GET route with the status and headers of GET and no body, errors included', async () => {
    const head = (path: string, headers: Record<string, string> = {}) => rawHttp(gateway.url, requestHead('HEAD', path, headers));
    const listed = await head('/api/v1/templates', { Authorization: `Bearer ${ws.apiKey}` });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toMatch(/^application\/json/);
    expect(listed.bodyBytes).toBe('');
    for (const [path, headers, status] of [
      ['/api/v1/templates', {}, 401],
      ['/api/v1/messages/msg_DOESNOTEXIST', { Authorization: `Bearer ${ws.apiKey}` }, 404],
      ['/api/v1/messages?limit=0', { Authorization: `Bearer ${ws.apiKey}` }, 400],
      ['/api/v1/nothing-here', {}, 404],
      ['/healthz', {}, 200],
    ] as const) {
      const response = await head(path, headers);
      expect(response.status, path).toBe(status);
      expect(response.bodyBytes, path).toBe('');
    }
  });
});

describe.each(STORE_KINDS)('rate limit (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind, { env: { TMS_RATE_LIMIT_PER_SECOND: '2', TMS_RATE_LIMIT_BURST: '3' } });
    ws = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  it('answers the 4th quick request with 429 and an integer Retry-After of at least 1 second', async () => {
    const key = await createKey(gateway, ws.workspaceId, ['templates:read']);
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<TestGateway['request']>> | undefined;
    for (let index = 0; index < 4; index += 1) {
      const response = await gateway.request('GET', '/api/v1/oas', { key: key.key });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expectError(limited!, 'rate_limited');
    const retryAfter = limited!.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('limits each key on its own', async () => {
    const a = await createKey(gateway, ws.workspaceId, ['templates:read']);
    const b = await createKey(gateway, ws.workspaceId, ['templates:read']);
    const statusesA: number[] = [];
    for (let index = 0; index < 4; index += 1) statusesA.push((await gateway.request('GET', '/api/v1/templates', { key: a.key })).status);
    expect(statusesA.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
    expect((await gateway.request('GET', '/api/v1/templates', { key: b.key })).status).toBe(200);
  });

  it('counts every route, and a limited send creates nothing', async () => {
    const own = await seedWorkspace(gateway);
    const body = { template_id: own.templateId, phone: '0912345678', template_data: VALID_DATA };
    const statuses: number[] = [];
    for (let index = 0; index < 8; index += 1) statuses.push((await gateway.request('POST', '/api/v1/messages/send', { key: own.apiKey, body })).status);
    const accepted = statuses.filter((status) => status === 202).length;
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 202 || status === 429)).toBe(true);
    // Reading back is itself rate limited, so count through the store the test owns.
    const rows = await gateway.runtime.store.db.selectFrom('messages').select('id').where('workspace_id', '=', own.workspaceId).execute();
    expect(rows).toHaveLength(accepted);
  });

  it("uses a key's own rate_limit_per_second set by the operator instead of the default", async () => {
    const fast = await createKey(gateway, ws.workspaceId, ['templates:read'], { rate_limit_per_second: 10 });
    const statuses: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      const response = await gateway.request('GET', '/api/v1/oas', { key: fast.key });
      statuses.push(response.status);
      if (index === 0) expect(response.headers.get('x-ratelimit-limit')).toBe('10');
    }
    // Ten quick requests fit a 10/s key although the default allows a burst of only 3.
    expect(statuses).toEqual(Array(10).fill(200));

    const changed = await createKey(gateway, ws.workspaceId, ['templates:read']);
    const patched = await gateway.admin('PATCH', `/api-keys/${changed.id}`, { rate_limit_per_second: 10 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.rate_limit_per_second).toBe(10);
    const after: number[] = [];
    for (let index = 0; index < 6; index += 1) after.push((await gateway.request('GET', '/api/v1/oas', { key: changed.key })).status);
    expect(after).toEqual(Array(6).fill(200));
  });

  it("enforces a key's own limit below the default: 1/s allows a burst of 2, not the default 3", async () => {
    const slow = await createKey(gateway, ws.workspaceId, ['templates:read'], { rate_limit_per_second: 1 });
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<TestGateway['request']>> | undefined;
    for (let index = 0; index < 3; index += 1) {
      const response = await gateway.request('GET', '/api/v1/oas', { key: slow.key });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
    }
    expect(statuses).toEqual([200, 200, 429]);
    expectError(limited!, 'rate_limited');
    expect(limited!.headers.get('x-ratelimit-limit')).toBe('1');
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
