/**
 * Property-based fuzzing of every documented route (public and operator): bodies, query strings,
 * path parameters and headers built from the OpenAPI documents, mutated with hostile values
 * (non-finite and huge numbers, NUL, lone surrogates, deep nesting, broken encodings). Whatever
 * arrives, the gateway never answers 5xx, every error carries the catalogued envelope, and a
 * refused request leaves the store exactly as it was.
 *
 * TMS_FUZZ_RUNS raises the number of requests (default keeps CI short); TMS_FUZZ_SEED replays a run.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_TYPES } from '../../src/services/errors.ts';
import { STORE_KINDS, seedWorkspace, startTestGateway, VALID_DATA, type SeededWorkspace, type TestGateway } from '../harness.ts';

const RUNS = Number(process.env.TMS_FUZZ_RUNS ?? 400);
const SEED = process.env.TMS_FUZZ_SEED === undefined ? undefined : Number(process.env.TMS_FUZZ_SEED);

interface Operation {
  method: string;
  path: string;
  queryNames: string[];
  hasBody: boolean;
  example: unknown;
}

interface FuzzedRequest {
  operation: Operation;
  pathValues: string[];
  query: [string, string][];
  body: { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string };
  contentType: string | null;
  authorized: boolean;
  idempotencyKey: string | null;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { example?: unknown; examples?: Record<string, { value?: unknown }> }> } }>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operationsOf(documents: OpenApiDocument[]): Operation[] {
  const seen = new Map<string, Operation>();
  for (const document of documents) {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      if (!path.startsWith('/api/v1') && !path.startsWith('/admin/v1')) continue;
      for (const [method, operation] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        const json = operation.requestBody?.content?.['application/json'];
        const example = json?.example ?? Object.values(json?.examples ?? {})[0]?.value ?? {};
        seen.set(`${method} ${path}`, {
          method: method.toUpperCase(),
          path,
          queryNames: (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
          hasBody: operation.requestBody !== undefined || ['post', 'put', 'patch'].includes(method),
          example,
        });
      }
    }
  }
  return [...seen.values()];
}

/** Numbers and number-like texts that have broken integer handling before. */
const hostileNumberText = fc.constantFrom('1e400', '-1e400', '1e30', '9223372036854775808', '18446744073709551616', '9007199254740993', '-1', '0', '2147483648', '1.5', 'NaN', 'Infinity', '-0');

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\udfff', '%00', '%ED%A0%80', '../../etc/passwd', "' OR 1=1 --", '<script>', 'Nguyễn Văn A', ' ', ''),
  fc.integer({ min: 200, max: 3000 }).map((length) => 'x'.repeat(length)),
);

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.double(),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(2 ** 53 + 2, -(2 ** 63), 2 ** 64, 1e300, -1, 0, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
);

/** The operation's example body with some fields replaced, removed or added. */
function mutatedBody(example: unknown): fc.Arbitrary<unknown> {
  if (typeof example !== 'object' || example === null || Array.isArray(example)) return hostileJson;
  const keys = Object.keys(example);
  return fc
    .record({
      replace: fc.subarray(keys),
      remove: fc.subarray(keys, { maxLength: Math.min(1, keys.length) }),
      values: fc.array(hostileJson, { minLength: keys.length, maxLength: keys.length }),
      extra: fc.option(fc.tuple(fc.string({ maxLength: 12 }), hostileJson), { nil: undefined }),
    })
    .map(({ replace, remove, values, extra }) => {
      const body: Record<string, unknown> = { ...(example as Record<string, unknown>) };
      replace.forEach((key, index) => (body[key] = values[index]));
      for (const key of remove) delete body[key];
      if (extra) body[extra[0]] = extra[1];
      return body;
    });
}

/** Raw texts a JSON parser must survive: huge exponents inside a real body, deep nesting, garbage. */
function rawBody(example: unknown): fc.Arbitrary<string> {
  const text = JSON.stringify(example ?? {});
  return fc.oneof(
    hostileNumberText.map((number) => text.replace(/"[^"]*"\s*:\s*("[^"]*"|\d+)/, (match) => `${match.split(':')[0]}:${number}`)),
    fc.integer({ min: 10, max: 100_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
    fc.integer({ min: 10, max: 50_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
    fc.constantFrom('', '{', 'null', '[]', '"text"', '{"template_id":"\\u0000"}', '{"a":1,"a":2}', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}'),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );
}

function pathSegment(knownIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...knownIds).map(encodeURIComponent) },
    { weight: 2, arbitrary: hostileString.map((value) => safeEncode(value)) },
    { weight: 1, arbitrary: fc.constantFrom('%ED%A0%80', '%00', '%', '%zz', '%C0%AF', '..', '%2e%2e') },
  );
}

function safeEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

/** Ids that exist, per API: the operator fuzzes its own workspace, so it cannot revoke the public key. */
interface KnownIds {
  public: string[];
  operator: string[];
}

function requestArbitrary(operations: Operation[], known: KnownIds): fc.Arbitrary<FuzzedRequest> {
  return fc.constantFrom(...operations).chain((operation) => {
    const knownIds = operation.path.startsWith('/admin/') ? known.operator : known.public;
    const parameterCount = (operation.path.match(/\{[^}]+\}/g) ?? []).length;
    const queryValue = fc.oneof(hostileNumberText, hostileString, fc.constantFrom('queued', 'failed', '2026-11-24T00:00:00Z', '2026-13-45', ...knownIds));
    return fc.record({
      operation: fc.constant(operation),
      pathValues: fc.array(pathSegment(knownIds), { minLength: parameterCount, maxLength: parameterCount }),
      query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...(operation.queryNames.length ? operation.queryNames : ['limit'])), fc.string({ maxLength: 8 })), queryValue), { maxLength: 4 }),
      body: operation.hasBody
        ? fc.oneof(
            { weight: 4, arbitrary: mutatedBody(operation.example).map((value) => ({ kind: 'json' as const, value })) },
            { weight: 2, arbitrary: rawBody(operation.example).map((text) => ({ kind: 'raw' as const, text })) },
            { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
          )
        : fc.oneof({ weight: 5, arbitrary: fc.constant({ kind: 'none' as const }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'json' as const, value })) }),
      contentType: fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data; boundary=x') }, { weight: 1, arbitrary: fc.constant(null) }),
      authorized: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      idempotencyKey: fc.option(fc.stringMatching(/^[\x21-\x7e]{1,300}$/), { freq: 3, nil: null }),
    });
  });
}

/** Every row of every table, in a stable order: what "nothing changed" means. */
async function snapshotStore(gateway: TestGateway): Promise<string> {
  const db = gateway.runtime.store.db;
  const tables =
    gateway.database.kind === 'sqlite'
      ? (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`.execute(db)).rows.map((row) => row.name)
      : (await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`.execute(db)).rows.map((row) => row.name);
  const parts: string[] = [];
  for (const table of tables) {
    const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(db)).rows;
    const lines = rows.map((row) => JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))).sort();
    parts.push(`${table}:${lines.join('\n')}`);
  }
  return parts.join('\n\n');
}

function urlOf(gateway: TestGateway, request: FuzzedRequest): string {
  let index = 0;
  const path = request.operation.path.replace(/\{[^}]+\}/g, () => request.pathValues[index++] ?? 'x');
  const query = request.query.map(([name, value]) => `${safeEncode(name)}=${safeEncode(value)}`).join('&');
  return `${gateway.url}${path}${query ? `?${query}` : ''}`;
}

async function send(gateway: TestGateway, workspace: SeededWorkspace, request: FuzzedRequest): Promise<{ status: number; contentType: string | null; text: string }> {
  const headers: Record<string, string> = {};
  if (request.authorized) headers.authorization = `Bearer ${request.operation.path.startsWith('/admin/') ? gateway.config.adminToken : workspace.apiKey}`;
  if (request.idempotencyKey !== null && request.operation.method === 'POST') headers['idempotency-key'] = request.idempotencyKey;
  let body: string | undefined;
  if (request.body.kind !== 'none' && request.operation.method !== 'GET') {
    body = request.body.kind === 'json' ? JSON.stringify(request.body.value) : request.body.text;
    if (request.contentType) headers['content-type'] = request.contentType;
  }
  const response = await fetch(urlOf(gateway, request), { method: request.operation.method, headers, body });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

/** The documented example with the seeded workspace's template, account and data, so mutations reach acceptance. */
function withSeededIds(example: unknown, seeded: SeededWorkspace): unknown {
  if (typeof example !== 'object' || example === null || Array.isArray(example)) return example;
  const body: Record<string, unknown> = { ...(example as Record<string, unknown>) };
  if ('template_id' in body) body.template_id = seeded.templateId;
  if ('oa_id' in body) body.oa_id = seeded.oaId;
  if ('template_data' in body) body.template_data = VALID_DATA;
  return body;
}

describe.each(STORE_KINDS)('fuzzed requests on every route (%s)', (kind) => {
  let gateway: TestGateway;
  let workspace: SeededWorkspace;
  let operations: Operation[];
  let knownIds: KnownIds;

  beforeAll(async () => {
    // A closed port as the platform: routes that call it (template sync) fail fast, as in an outage.
    gateway = await startTestGateway(kind, { env: { ZNS_API_URL: 'http://127.0.0.1:9', ZNS_OAUTH_URL: 'http://127.0.0.1:9', TMS_PLATFORM_QUOTA_CACHE_MS: '0' } });
    workspace = await seedWorkspace(gateway);
    const playground = await seedWorkspace(gateway, { name: 'operator playground' });
    const sent = await gateway.request('POST', '/api/v1/messages/send', {
      key: workspace.apiKey,
      body: { template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, send_at: new Date(Date.now() + 86_400_000).toISOString() },
    });
    expect(sent.status, sent.text).toBe(202);
    const documents: OpenApiDocument[] = [(await gateway.request('GET', '/openapi.json')).body];
    const operator = await gateway.request('GET', '/admin/v1/openapi.json', { key: gateway.config.adminToken! });
    if (operator.status === 200) documents.push(operator.body);
    operations = operationsOf(documents).map((operation) => ({ ...operation, example: withSeededIds(operation.example, operation.path.startsWith('/admin/') ? playground : workspace) }));
    knownIds = {
      public: [workspace.templateId, workspace.oaId, sent.body.msg_id],
      operator: [playground.workspaceId, playground.templateId, playground.oaId, playground.apiKeyId],
    };
  });
  afterAll(async () => gateway?.close());

  it('documents the routes it fuzzes, public and operator', () => {
    const paths = new Set(operations.map((operation) => operation.path));
    expect([...paths].some((path) => path.startsWith('/api/v1/messages'))).toBe(true);
    expect([...paths].some((path) => path.startsWith('/admin/v1/workspaces'))).toBe(true);
  });

  it('never answers 5xx but for the platform being down, answers every error in the catalogued envelope, and stores nothing it refused', async () => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(operations, knownIds), async (request) => {
        const before = await snapshotStore(gateway);
        const response = await send(gateway, workspace, request);
        const described = `${request.operation.method} ${urlOf(gateway, request).slice(0, 300)} → ${response.status} ${response.text.slice(0, 300)}`;
        // The platform here is a closed port: a verb that must ask it (a template or sender account
        // checked at registration) rightly answers 503 platform_unavailable. Any other 5xx is a bug.
        const platformDown = response.status === 503 && response.text.includes('"type":"platform_unavailable"');
        if (!platformDown) expect(response.status, described).toBeLessThan(500);
        if (response.status < 400) return;
        expect(response.contentType, described).toMatch(/^application\/json/);
        const body = JSON.parse(response.text) as { error: { code: number; type: string; message: string } };
        expect(body.error.code, described).toBe(response.status);
        expect(ERROR_TYPES, described).toContain(body.error.type);
        expect(ERROR_CATALOGUE[body.error.type as keyof typeof ERROR_CATALOGUE].status, described).toBe(response.status);
        expect(body.error.message.trim(), described).not.toBe('');
        expect(await snapshotStore(gateway), `a refused request changed the store: ${described}`).toBe(before);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }, 300_000);
});
