/**
 * The console's own OpenAPI document: served without a session, made of the /console/api routes
 * (and nothing else), each with the session and CSRF requirements it really has, and clean under
 * Redocly's recommended rules like the other two documents.
 */
import { fileURLToPath } from 'node:url';
import { lintFromString, loadConfig, type Config } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.ts';
import { expectStatus } from '../api/helpers.ts';

const CONFIG_PATH = fileURLToPath(new URL('../../../../redocly.yaml', import.meta.url));
const CHANGING = new Set(['post', 'put', 'patch', 'delete']);

/** The document does not depend on the store: one gateway on SQLite is enough. */
describe('console OpenAPI document', () => {
  let gateway: TestGateway;
  let config: Config;
  let response: Awaited<ReturnType<TestGateway['request']>>;

  beforeAll(async () => {
    gateway = await startTestGateway('sqlite');
    config = await loadConfig({ configPath: CONFIG_PATH });
    response = await gateway.request('GET', '/console/api/openapi.json');
  });
  afterAll(async () => gateway?.close());

  it('is served without a session and passes Redocly lint with no problem', async () => {
    expectStatus(response, 200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const problems = await lintFromString({ source: response.text, absoluteRef: `${gateway.url}/console/api/openapi.json`, config });
    const described = problems.map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}: ${problem.message}`);
    expect(described).toEqual([]);
  });

  it('describes the /console/api routes and only them, apart from the other two documents', async () => {
    const document = response.body;
    expect(document.info.title).toBe('TMS: console API');
    const paths = Object.keys(document.paths);
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.every((path) => path.startsWith('/console/api/'))).toBe(true);
    for (const path of ['/console/api/api-keys/{id}/test-report', '/console/api/webhook-deliveries/{id}/redeliver', '/console/api/team/{user_id}', '/console/api/activity', '/console/api/session']) {
      expect(paths).toContain(path);
    }
    const publicPaths = Object.keys((await gateway.request('GET', '/openapi.json')).body.paths);
    const operatorPaths = Object.keys((await gateway.request('GET', '/admin/v1/openapi.json', { key: gateway.config.adminToken! })).body.paths);
    expect([...publicPaths, ...operatorPaths].filter((path) => path.startsWith('/console'))).toEqual([]);
    expect(operatorPaths).toContain('/admin/v1/workspaces/{id}/users');
  });

  it('says which operations need the session cookie and which need the CSRF header', async () => {
    const document = response.body;
    expect(document.components.securitySchemes).toEqual({ consoleSession: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'tms_console_session' }) });
    expect(document.security).toEqual([{ consoleSession: [] }]);
    const signIn = document.paths['/console/api/session'].post;
    expect(signIn.security).toEqual([]);
    const csrf = (operation: any) => (operation.parameters ?? []).some((parameter: any) => parameter.$ref === '#/components/parameters/CsrfToken');
    expect(csrf(signIn)).toBe(false);
    for (const [path, item] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const open = Array.isArray(operation.security) && operation.security.length === 0;
        expect(csrf(operation), `${method} ${path}`).toBe(CHANGING.has(method) && !open);
        if (!open) expect(Object.keys(operation.responses), `${method} ${path}`).toContain('401');
      }
    }
    const revoke = document.paths['/console/api/api-keys/{id}/revoke'].post;
    expect(Object.keys(revoke.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
  });
});
