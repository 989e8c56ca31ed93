/**
 * docs/alerts.yml, the Prometheus rules shipped for operators: every metric it names is one the
 * gateway exposes, `promtool check rules` accepts it, and its unit tests (alert-rules.promtool.yml:
 * each alert fires on the situation it is for and stays quiet otherwise) pass.
 *
 * The promtool checks are skipped on a machine without promtool (Debian's `prometheus` package);
 * in CI (CI=true) its absence is a failure, and .ci/run installs it.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.ts';
import { REPO_ROOT } from './processes.ts';

const RULES_FILE = join(REPO_ROOT, 'docs/alerts.yml');
const UNIT_TESTS = fileURLToPath(new URL('./alert-rules.promtool.yml', import.meta.url));

function findOnPath(command: string): string | null {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(directory, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

const promtool = findOnPath('promtool');
const required = process.env.CI === 'true';
const skipReason = promtool || required ? '' : ' (skipped: promtool is not installed; apt-get install prometheus to run it)';
const run = promisify(execFile);

describe('docs/alerts.yml names metrics the gateway exposes', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway('sqlite', { worker: true, env: { ZNS_API_URL: 'http://127.0.0.1:9', ZNS_OAUTH_URL: 'http://127.0.0.1:9', TMS_TEMPLATE_SYNC_MS: '0' } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('every tms_ metric of every rule is in /metrics', async () => {
    const rules = readFileSync(RULES_FILE, 'utf8');
    const expressions = [...rules.matchAll(/^\s+expr: (?:\|\n((?:\s{10,}.*\n)+)|(.*)\n)/gm)].map((match) => match[1] ?? match[2] ?? '');
    expect(expressions.length).toBeGreaterThanOrEqual(5);
    const named = new Set(expressions.flatMap((expression) => expression.match(/\btms_[a-z0-9_]+/g) ?? []));
    const metrics = await gateway.request('GET', '/metrics', { key: gateway.config.adminToken! });
    const exposed = new Set([...metrics.text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]));
    expect([...named].filter((name) => !exposed.has(name))).toEqual([]);
    expect([...named].sort()).toEqual(
      expect.arrayContaining([
        'tms_queue_oldest_due_age_seconds',
        'tms_webhook_outbox_oldest_pending_age_seconds',
        'tms_sender_accounts',
        'tms_platform_errors_total',
        'tms_dispatch_outcomes_total',
        'tms_wallet_balance_vnd',
      ]),
    );
  });
});

describe.skipIf(skipReason !== '')(`docs/alerts.yml under promtool${skipReason}`, () => {
  beforeAll(() => {
    if (!promtool) throw new Error('CI needs promtool for the alert-rule checks (.ci/run installs the Debian package prometheus)');
  });

  it('passes promtool check rules', async () => {
    const { stdout } = await run(promtool!, ['check', 'rules', RULES_FILE]);
    expect(stdout).toContain('SUCCESS');
  });

  it('passes its unit tests: each alert fires on its situation and only then', async () => {
    const result = await run(promtool!, ['test', 'rules', UNIT_TESTS]).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`promtool test rules failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    });
    expect(result.stdout).toContain('SUCCESS');
  });
});
