/**
 * Route schemas are compiled on their first request: every one of them must still compile, the
 * lazily compiled checks must answer as Ajv's do, and a broken schema must not go unnoticed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { parseConfig } from '../../src/config/config.ts';
import { buildApp } from '../../src/http/app.ts';
import type { App } from '../../src/http/route-support.ts';
import { createSchemaCompilers, type SchemaCompilers } from '../../src/http/plugins/schema-compilers.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

describe('route schemas compiled on first use', () => {
  let database: TestDatabase;
  let runtime: Runtime;
  let app: App;
  let compilers: SchemaCompilers;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    runtime = await createRuntime(parseConfig(gatewayEnvironment(database)), { log: pino({ level: 'silent' }) });
    compilers = createSchemaCompilers();
    app = await buildApp({ services: runtime, logger: runtime.log }, compilers);
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    await runtime.close();
    await database.drop();
  });

  it('compiles every route schema of the API, the operator API and the console without an error', () => {
    // 229 validators and serializers at the time of writing; none was compiled at start.
    expect(compilers.compilePending()).toBeGreaterThan(200);
    expect(compilers.compilePending()).toBe(0);
  });

  it('checks a request part like Ajv, including the errors Fastify reads after a failure', () => {
    const validate = compilers.validatorCompiler({ schema: { type: 'object', required: ['phone'], properties: { phone: { type: 'string' } } }, httpPart: 'body' });
    expect(validate({ phone: 84912345678 })).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ instancePath: '/phone', keyword: 'type' });
    expect(validate({ phone: '84912345678' })).toBe(true);
    expect(validate.errors).toBeNull();
  });

  it('coerces query strings and path parameters, never bodies', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer' } } };
    const query = { limit: '20' };
    expect(compilers.validatorCompiler({ schema, httpPart: 'querystring' })(query)).toBe(true);
    expect(query.limit).toBe(20);
    expect(compilers.validatorCompiler({ schema, httpPart: 'body' })({ limit: '20' })).toBe(false);
  });

  it('reports a schema that cannot compile when asked to compile the pending ones', () => {
    const fresh = createSchemaCompilers();
    fresh.validatorCompiler({ schema: { $ref: '#/definitions/missing' }, httpPart: 'body' });
    expect(() => fresh.compilePending()).toThrow(/missing/);
  });
});
