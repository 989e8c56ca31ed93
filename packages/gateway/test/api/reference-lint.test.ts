/**
 * Both OpenAPI documents, as the gateway serves them, pass Redocly's `recommended` rules with the
 * exceptions of redocly.yaml (each justified there): no error and no warning. Offline: the
 * documents are linted from memory and the rules ship in @redocly/openapi-core.
 */
import { fileURLToPath } from 'node:url';
import { lintFromString, loadConfig, type Config } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.ts';
import { expectStatus } from './helpers.ts';

const CONFIG_PATH = fileURLToPath(new URL('../../../../redocly.yaml', import.meta.url));

/** The documents do not depend on the store: one gateway on SQLite is enough. */
describe('OpenAPI documents under Redocly lint (recommended)', () => {
  let gateway: TestGateway;
  let config: Config;

  beforeAll(async () => {
    gateway = await startTestGateway('sqlite');
    config = await loadConfig({ configPath: CONFIG_PATH });
  });
  afterAll(async () => gateway?.close());

  it.each([
    ['public', '/openapi.json', false],
    ['operator', '/admin/v1/openapi.json', true],
  ])('%s document (%s) has no problem', async (_name, url, needsOperatorToken) => {
    const response = await gateway.request('GET', url, needsOperatorToken ? { key: gateway.config.adminToken! } : {});
    expectStatus(response, 200);
    const problems = await lintFromString({ source: response.text, absoluteRef: `${gateway.url}${url}`, config });
    const described = problems.map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}: ${problem.message}`);
    expect(described).toEqual([]);
  });
});
