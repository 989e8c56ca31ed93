/**
 * The API references (/openapi.json, /admin/v1/openapi.json), their pages (/docs, /admin/docs)
 * with the Redoc bundle the gateway serves, and the health endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorType } from '../../src/services/errors.ts';
import { STORE_KINDS, startTestGateway, type TestGateway } from '../harness.ts';
import { expectError, expectStatus } from './helpers.ts';

/** Every /api/v1 operation of docs/api.md to 4.9, in OpenAPI path syntax. */
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

/** The endpoints outside /admin/v1 that the operator reference covers. */
const OPERATOR_EXTRAS: [string, string][] = [
  ['get', '/healthz'],
  ['get', '/readyz'],
  ['get', '/metrics'],
  ['post', '/platform/zns/events'],
];

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: ({ $ref: string } | { name: string; in: string; required?: boolean; schema?: { type?: unknown; enum?: unknown[] }; example?: unknown })[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string }; examples?: Record<string, { value: any }> }> }>;
}

interface Document {
  openapi: string;
  info: { description: string; version: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: { parameters?: Record<string, { name: string }>; schemas?: Record<string, unknown> };
}

function operationsOf(document: Document): [string, Operation][] {
  const items = [...Object.entries(document.paths), ...Object.entries(document.webhooks ?? {}).map(([name, item]) => [`webhook ${name}`, item] as const)];
  return items.flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation]));
}

const parameterNames = (document: Document, operation: Operation): string[] =>
  (operation.parameters ?? []).map((parameter) => ('$ref' in parameter ? document.components.parameters![parameter.$ref.split('/').pop()!]!.name : parameter.name));

/** The same-origin scripts and no inline script, no event-handler attribute: what script-src 'self' allows. */
function expectNoInlineScript(html: string): string[] {
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  expect(scripts.length).toBeGreaterThan(0);
  for (const [, attributes, body] of scripts) {
    expect(attributes).toMatch(/\bsrc="\/[^"]+"/);
    expect(body!.trim()).toBe('');
  }
  expect(html).not.toMatch(/\son[a-z]+\s*=/i);
  expect(html).not.toMatch(/javascript:/i);
  return scripts.map(([, attributes]) => /\bsrc="([^"]+)"/.exec(attributes!)![1]!);
}

describe.each(STORE_KINDS)('API references and health (%s)', (kind) => {
  let gateway: TestGateway;
  let publicDocument: Document;
  let operatorDocument: Document;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    publicDocument = (await gateway.request('GET', '/openapi.json')).body;
    operatorDocument = (await gateway.request('GET', '/admin/v1/openapi.json', { key: gateway.config.adminToken! })).body;
  });
  afterAll(async () => gateway?.close());

  it('serves the public OpenAPI 3.1 document without a key, with exactly the /api/v1 operations', async () => {
    const response = await gateway.request('GET', '/openapi.json');
    expectStatus(response, 200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(publicDocument.openapi).toMatch(/^3\.1\./);
    expect(publicDocument.info.version).toBe('1.0.0');
    expect(publicDocument.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const operations = Object.entries(publicDocument.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
    expect(operations.sort()).toEqual(API_OPERATIONS.map(([method, path]) => `${method} ${path}`).sort());
  });

  it('keeps the operator document behind the operator token, answering without it in the error envelope', async () => {
    expectError(await gateway.request('GET', '/admin/v1/openapi.json'), 'unauthenticated');
    expectError(await gateway.request('GET', '/admin/v1/openapi.json', { key: 'not-the-operator-token' }), 'unauthenticated');
    const response = await gateway.request('GET', '/admin/v1/openapi.json', { key: gateway.config.adminToken! });
    expectStatus(response, 200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(operatorDocument.openapi).toMatch(/^3\.1\./);
    const paths = Object.keys(operatorDocument.paths);
    expect(paths.filter((path) => path.startsWith('/api/'))).toEqual([]);
    expect(paths.filter((path) => path.startsWith('/admin/v1/')).length).toBeGreaterThanOrEqual(19);
    for (const [method, path] of OPERATOR_EXTRAS) expect(operatorDocument.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    // An open API key is not the operator token.
    expect(JSON.stringify(operatorDocument.components)).not.toContain('X-API-Key');
  });

  it('gives every operation of both documents a unique operationId, a summary, a described tag and examples', () => {
    const ids = new Set<string>();
    for (const document of [publicDocument, operatorDocument]) {
      const tagNames = document.tags.map((tag) => tag.name);
      for (const tag of document.tags) expect(tag.description, tag.name).toMatch(/\S/);
      for (const [name, operation] of operationsOf(document)) {
        expect(operation.operationId, name).toMatch(/^[a-z][A-Za-z]+$/);
        expect(ids.has(operation.operationId!), `${name}: duplicate operationId`).toBe(false);
        ids.add(operation.operationId!);
        expect(operation.summary, name).toMatch(/\S/);
        expect(operation.tags?.length, name).toBe(1);
        expect(tagNames, name).toContain(operation.tags![0]);
        for (const media of Object.values(operation.requestBody?.content ?? {})) expect(Object.keys(media.examples ?? {}).length, `${name} request`).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(operation.responses)) {
          expect(response.description, `${name} ${status}`).not.toBe('Default Response');
          // The webhook's answers are the receiver's: their bodies are ignored.
          if (!name.startsWith('POST webhook')) expect(Object.keys(response.content ?? {}).length, `${name} ${status} body`).toBeGreaterThan(0);
          for (const media of Object.values(response.content ?? {})) expect(Object.keys(media.examples ?? {}).length, `${name} ${status}`).toBeGreaterThan(0);
        }
      }
    }
  });

  it('documents each error response with the envelope and examples of catalogued types of that status, listed in the description', () => {
    for (const document of [publicDocument, operatorDocument]) {
      for (const [name, operation] of operationsOf(document)) {
        if (name.startsWith('POST webhook')) continue;
        const errorStatuses = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
        expect(errorStatuses.length, name).toBeGreaterThan(0);
        for (const status of errorStatuses) {
          const media = operation.responses[status]!.content!['application/json']!;
          expect(media.schema, `${name} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
          for (const [exampleName, example] of Object.entries(media.examples!)) {
            const type = example.value.error.type as ErrorType;
            expect(exampleName).toBe(type);
            expect(ERROR_CATALOGUE[type]?.status, `${name} ${status} ${type}`).toBe(Number(status));
            expect(example.value).toEqual({ error: { code: Number(status), type, message: expect.stringMatching(/\S/) } });
            expect(operation.description, `${name} lists ${type}`).toContain(`\`${type}\``);
          }
        }
      }
    }
    const send = publicDocument.paths['/api/v1/messages/send']!.post!;
    for (const status of ['202', '400', '401', '402', '403', '404', '409', '413', '415', '422', '429']) expect(Object.keys(send.responses)).toContain(status);
    expect(Object.keys(send.responses['402']!.content!['application/json']!.examples!)).toEqual(['insufficient_balance', 'account_cap_reached']);
    expect(Object.keys(publicDocument.paths['/api/v1/messages/{id}/cancel']!.post!.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
  });

  it('declares the headers the gateway reads and sends', () => {
    for (const [document, audience] of [[publicDocument, 'public'], [operatorDocument, 'operator']] as const) {
      for (const [name, operation] of operationsOf(document)) {
        if (name.startsWith('POST webhook')) continue;
        expect(parameterNames(document, operation), name).toContain('X-Request-Id');
        if (audience === 'public' && name.startsWith('POST')) expect(parameterNames(document, operation), name).toContain('Idempotency-Key');
        for (const [status, response] of Object.entries(operation.responses)) {
          const headers = Object.keys(response.headers ?? {});
          expect(headers, `${name} ${status}`).toContain('X-Request-Id');
          if (status === '429') expect(headers, name).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining']));
          if (audience === 'public' && status.startsWith('2')) expect(headers, name).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining']));
          if (audience === 'public' && status.startsWith('2') && name.startsWith('POST')) expect(headers, name).toContain('Idempotent-Replayed');
        }
      }
    }
    expect(parameterNames(operatorDocument, operatorDocument.paths['/platform/zns/events']!.post!)).toContain('X-ZEvent-Signature');
  });

  it('offers the API key as Bearer or X-API-Key, and the operator token as Bearer', () => {
    const schemes = (document: Document) => (document.components as { securitySchemes: Record<string, { type: string; scheme?: string; name?: string }> }).securitySchemes;
    expect(Object.values(schemes(publicDocument))).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'http', scheme: 'bearer' }), expect.objectContaining({ type: 'apiKey', name: 'X-API-Key' })]),
    );
    expect(Object.values(schemes(operatorDocument))).toEqual([expect.objectContaining({ type: 'http', scheme: 'bearer' })]);
    for (const path of ['/healthz', '/readyz', '/platform/zns/events']) expect(Object.values(operatorDocument.paths[path]!)[0]!.security, path).toEqual([]);
  });

  it('renders enumerated parameters as typed enums', () => {
    const status = publicDocument.paths['/api/v1/messages']!.get!.parameters!.find((parameter) => 'name' in parameter && parameter.name === 'status');
    expect(status).toMatchObject({ in: 'query', schema: { type: 'string', enum: ['queued', 'sending', 'sent', 'delivered', 'failed'] } });
    for (const document of [publicDocument, operatorDocument]) {
      for (const [name, operation] of operationsOf(document)) {
        for (const parameter of operation.parameters ?? []) {
          if ('name' in parameter) expect(parameter.schema?.type, `${name} ${parameter.name}`).toBeDefined();
        }
      }
    }
  });

  it('describes the delivery-report webhook: body, signature headers, acknowledgement and retries', () => {
    const report = publicDocument.webhooks?.deliveryReport?.post;
    expect(report).toBeDefined();
    expect(parameterNames(publicDocument, report!)).toEqual(expect.arrayContaining(['X-Gateway-Signature', 'X-Gateway-Delivery-Id', 'X-Gateway-Attempt']));
    expect(report!.description).toContain('HMAC-SHA256');
    expect(report!.description).toContain('within 30 s');
    expect(report!.description).toContain('1 s, 5 s, 30 s, 2 min, 10 min');
    const body = report!.requestBody!.content['application/json']!;
    expect(Object.keys(body.examples!.delivered!.value as object)).toEqual(['message_id', 'client_req_id', 'from', 'to', 'status', 'delivered_at', 'tracking_id']);
    expect(publicDocument.components.schemas?.DeliveryReport).toMatchObject({ properties: { to: { type: ['string', 'null'] }, status: { enum: ['SUCCESS'] } } });
  });

  it('keeps the rules an integrator needs in the description, and points to the guides', () => {
    const description = publicDocument.info.description;
    for (const rule of ['Vietnam time', 'Idempotency-Key', 'daily_quota_exceeded', 'rsa_phone_invalid', 'Retry-After', '402', '409', 'has_more', 'MGF1 SHA-1', 'docs/api.md', 'docs/errors.md']) {
      expect(description, rule).toContain(rule);
    }
  });

  it.each([
    ['/docs', '/openapi.json'],
    ['/admin/docs', '/admin/v1/openapi.json'],
  ])('serves %s under a strict Content-Security-Policy, with no inline script', async (page, documentUrl) => {
    const response = await gateway.request('GET', page);
    expectStatus(response, 200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const policy = response.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]) {
      expect(policy).toContain(directive);
    }
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    expect(response.text).toContain(`data-spec-url="${documentUrl}"`);
    for (const src of expectNoInlineScript(response.text)) {
      const script = await gateway.request('GET', src);
      expectStatus(script, 200);
      expect(script.headers.get('content-type'), src).toMatch(/^text\/javascript/);
    }
  });

  it('asks for the operator token on /admin/docs and keeps it out of the page', async () => {
    const page = (await gateway.request('GET', '/admin/docs')).text;
    expect(page).toMatch(/<input id="operator-token"[^>]*type="password"/);
    expect(page).not.toContain(gateway.config.adminToken!);
    expect((await gateway.request('GET', '/admin/docs')).headers.get('content-security-policy')).toContain("form-action 'none'");
  });

  it('serves the Redoc bundle itself, cacheable for good, with no CDN address left in it', async () => {
    const page = (await gateway.request('GET', '/docs')).text;
    const bundleUrl = /<script src="(\/docs\/assets\/redoc\.standalone\.js\?v=[\d.]+)"/.exec(page)?.[1];
    expect(bundleUrl).toBeDefined();
    const bundle = await gateway.request('GET', bundleUrl!);
    expectStatus(bundle, 200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(bundle.headers.get('cache-control')).toContain('immutable');
    expect(bundle.text).toContain('Redoc');
    expect(bundle.text).not.toContain('cdn.redoc.ly');
    const gzipped = await gateway.request('GET', bundleUrl!, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(gzipped.text).toBe(bundle.text);
    const plain = await gateway.request('GET', bundleUrl!, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.text).toBe(bundle.text);
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
