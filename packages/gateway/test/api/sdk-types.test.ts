/**
 * The SDK's generated API types (packages/client/src/generated/api-types.ts) are what the public
 * OpenAPI document, as the gateway serves it, says today. A route schema changed without
 * `npm run sdk:types` fails here; the SDK's own types are then checked against the regenerated file
 * by the typecheck (packages/client/test/types-match-api.test-d.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/http/openapi/document-types.ts';
import { SDK_TYPES_FILE, renderSdkTypes } from '../../src/main/write-sdk-types.ts';
import { startTestGateway, type TestGateway } from '../harness.ts';
import { expectStatus } from './helpers.ts';

const committedPath = fileURLToPath(new URL(`../../../../${SDK_TYPES_FILE}`, import.meta.url));

/** A document with one operation whose 200 body is `schema`. */
function documentAnswering(schema: Record<string, unknown>): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title: 'test', version: '1', description: '' },
    paths: { '/thing': { get: { operationId: 'getThing', responses: { '200': { description: 'the thing', content: { 'application/json': { schema } } } } } } },
    components: {},
  };
}

/** The document does not depend on the store: one gateway on SQLite is enough. */
describe('the SDK types generated from the OpenAPI document', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway('sqlite');
  });
  afterAll(async () => gateway?.close());

  it('are up to date with the document the gateway serves', async () => {
    const response = await gateway.request('GET', '/openapi.json');
    expectStatus(response, 200);
    const committed = readFileSync(committedPath, 'utf8');
    expect(committed, `${SDK_TYPES_FILE} is stale: run \`npm run sdk:types\`, then make packages/client/src/types.ts match`).toBe(
      renderSdkTypes(response.body as OpenApiDocument),
    );
  });
});

describe('renderSdkTypes', () => {
  it('renders nullable fields, enums, optional fields and maps as TypeScript', () => {
    const rendered = renderSdkTypes(
      documentAnswering({
        type: 'object',
        required: ['id', 'note', 'state'],
        properties: {
          id: { type: 'string', minLength: 1 },
          note: { type: ['string', 'null'] },
          state: { type: 'string', enum: ['on', 'off'] },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          sizes: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'null' }] } },
        },
      }),
    );
    expect(rendered).toContain(
      [
        '      200: {',
        '        id: string;',
        '        note: string | null;',
        "        state: 'on' | 'off';",
        '        labels?: Record<string, string>;',
        '        sizes?: (number | null)[];',
        '      };',
      ].join('\n'),
    );
  });

  it('refuses a keyword it cannot type, rather than rendering a wrong type', () => {
    expect(() => renderSdkTypes(documentAnswering({ type: 'object', not: { required: ['id'] } }))).toThrow(
      '/thing get/responses/200: unsupported JSON Schema keyword "not"',
    );
  });
});
