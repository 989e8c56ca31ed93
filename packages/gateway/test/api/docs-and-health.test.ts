/** The API reference (/openapi.json, /docs) and the health endpoints. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { expectStatus } from './helpers.ts';

/** Every /api/v1 operation of sections 4.1 to 4.9, in OpenAPI path syntax. */
const API_OPERATIONS: [string, string][] = [
  ['post', '/api/v1/messages/send'],
  ['post', '/api/v1/messages/batch'],
  ['post', '/api/v1/messages/rsa'],
  ['get', '/api/v1/messages/{id}'],
  ['get', '/api/v1/messages'],
  ['post', '/api/v1/messages/{id}/cancel'],
  ['get', '/api/v1/templates'],
  ['get', '/api/v1/oas'],
  ['get', '/api/v1/quota'],
];

describe.each(STORE_KINDS)('reference and health (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  it('serves an OpenAPI 3.1 document listing every /api/v1 operation, without a key', async () => {
    const response = await gateway.request('GET', '/openapi.json');
    expectStatus(response, 200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const document = response.body;
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info.version).toBe('1.0.0');
    for (const [method, path] of API_OPERATIONS) {
      expect(document.paths[path], path).toBeDefined();
      expect(document.paths[path][method], `${method} ${path}`).toBeDefined();
    }
    const apiPaths = Object.keys(document.paths).filter((path) => path.startsWith('/api/v1'));
    expect(apiPaths.sort()).toEqual([...new Set(API_OPERATIONS.map(([, path]) => path))].sort());
  });

  it('documents the error statuses of decisions.md on the send operations', async () => {
    const document = (await gateway.request('GET', '/openapi.json')).body;
    for (const path of ['/api/v1/messages/send', '/api/v1/messages/batch', '/api/v1/messages/rsa']) {
      const responses = Object.keys(document.paths[path].post.responses);
      for (const status of ['202', '400', '401', '402', '403', '404', '413', '415', '422', '429']) expect(responses, `${path} ${status}`).toContain(status);
    }
    expect(Object.keys(document.paths['/api/v1/messages/{id}/cancel'].post.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
  });

  it('documents the decisions an integrator needs, in the document and on the page', async () => {
    const description: string = (await gateway.request('GET', '/openapi.json')).body.info.description;
    for (const rule of ['Vietnam time', 'Idempotency-Key', 'daily_quota_exceeded', 'rsa_phone_invalid', 'Retry-After', '402', '409', 'has_more', 'MGF1 SHA-1']) {
      expect(description, rule).toContain(rule);
    }
    const page = (await gateway.request('GET', '/docs')).text;
    expect(page).toContain('<code>Idempotent-Replayed: true</code>');
  });

  it('serves an HTML reference mentioning every /api/v1 path', async () => {
    const response = await gateway.request('GET', '/docs');
    expectStatus(response, 200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.text).toMatch(/^<!doctype html>/i);
    for (const [method, path] of API_OPERATIONS) {
      expect(response.text, path).toContain(`<code>${path}</code>`);
      expect(response.text).toContain(method.toUpperCase());
    }
  });

  it('answers /healthz with 200', async () => {
    const response = await gateway.request('GET', '/healthz');
    expectStatus(response, 200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 and the store kind', async () => {
    const response = await gateway.request('GET', '/readyz');
    expectStatus(response, 200);
    expect(response.body).toEqual({ status: 'ready', store: kind });
  });
});
