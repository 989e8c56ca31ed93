/**
 * `tms admin`, run as a subprocess exactly as an operator runs it: the whole operator flow with
 * --json, human output, usage errors and exit codes, and one store shared with the HTTP API.
 * SQLite always (a temp TMS_DATA_DIR); PostgreSQL when TMS_TEST_DATABASE_URL is set.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { resolveSecrets } from '../../src/config/secrets.ts';
import { decryptSecret } from '../../src/lib/crypto.ts';
import { MAX_ACTIVITY_PAGE_SIZE, MAX_OPERATOR_PAGE_SIZE } from '../../src/lib/limits.ts';
import { openStore } from '../../src/store/database.ts';
import { STORE_KINDS, createTestDatabase, httpRequest, type TestDatabase } from '../harness.ts';
import { REPO_ROOT, TMS_BIN, childEnvironment, freePort, killAllTms, runAdminJson, runTms, startTms } from './processes.ts';

const FLOW_TIMEOUT_MS = 180_000;
const STACK_FRAME = /\n\s+at /;

describe.each(STORE_KINDS)('tms admin (%s)', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let files: string;
  const admin = (...args: string[]) => runAdminJson(args, env);
  const human = (...args: string[]) => runTms(['admin', ...args], env);

  // Filled in as the flow goes.
  let shopA: any;
  let shopB: any;
  let key: any;
  let spareKey: any;
  const oaId = `oa${randomBytes(4).toString('hex')}`;
  const templateId = `tpl${randomBytes(4).toString('hex')}`;
  const appSecret = `cli-app-secret-${randomBytes(6).toString('hex')}`;
  const refreshToken = `cli-refresh-token-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    env = { ...database.env, TMS_LOG_LEVEL: 'silent' };
    if (kind === 'postgres') {
      // Several processes share one PostgreSQL database, so its secrets must come from the environment.
      env.TMS_ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
      env.TMS_MASTER_KEY = randomBytes(32).toString('hex');
    }
    files = mkdtempSync(join(tmpdir(), 'tms-cli-files-'));
    // As an operator sets up a host: `tms admin` works on an existing store, never creates one.
    const migrated = await runTms(['migrate'], env);
    if (migrated.code !== 0) throw new Error(`tms migrate exited ${migrated.code}: ${migrated.stderr}`);
  });
  afterAll(async () => {
    await killAllTms();
    await database?.drop();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  it(
    'creates, lists, shows, suspends, resumes and caps workspaces',
    async () => {
      shopA = await admin('workspaces', 'create', '--name', 'Shop A', '--message-cap', '500');
      expect(shopA).toEqual({
        id: expect.stringMatching(/^ws_/),
        name: 'Shop A',
        status: 'active',
        balance: 0,
        message_cap: 500,
        messages_used: 0,
        is_demo: false,
        created_at: expect.any(String),
      });
      shopB = await admin('workspaces', 'create', '--name', 'Shop B');
      expect(shopB.message_cap).toBeNull();

      const list = await admin('workspaces', 'list');
      expect(list.count).toBe(2);
      expect(list.workspaces.map((workspace: { id: string }) => workspace.id)).toEqual([shopB.id, shopA.id]);
      expect(await admin('workspaces', 'show', shopA.id)).toEqual(shopA);
      expect((await admin('workspaces', 'list', '--limit', '1', '--offset', '1')).workspaces.map((workspace: { id: string }) => workspace.id)).toEqual([shopA.id]);

      expect(await admin('workspaces', 'suspend', shopA.id)).toMatchObject({ id: shopA.id, status: 'suspended' });
      expect((await admin('workspaces', 'show', shopA.id)).status).toBe('suspended');
      expect(await admin('workspaces', 'resume', shopA.id)).toMatchObject({ id: shopA.id, status: 'active' });

      expect((await admin('workspaces', 'set-cap', shopA.id, '1000')).message_cap).toBe(1000);
      expect((await admin('workspaces', 'set-cap', shopA.id, 'none')).message_cap).toBeNull();
      expect((await admin('workspaces', 'show', shopA.id)).message_cap).toBeNull();
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'tops up the wallet and shows it with its ledger',
    async () => {
      const topUp = await admin('wallet', 'top-up', shopA.id, '200000', '--note', 'bank transfer 42');
      expect(topUp).toMatchObject({ balance: 200_000, entry: { kind: 'top_up', amount: 200_000, balance_after: 200_000, note: 'bank transfer 42' } });
      await admin('wallet', 'top-up', shopA.id, '5000');
      const wallet = await admin('wallet', 'show', shopA.id);
      expect(wallet).toMatchObject({ workspace_id: shopA.id, balance: 205_000, count: 2 });
      expect(wallet.ledger.map((entry: { amount: number }) => entry.amount)).toEqual([5000, 200_000]);
      expect((await admin('wallet', 'show', shopA.id, '--limit', '1')).ledger).toHaveLength(1);
      expect((await admin('wallet', 'show', shopA.id, '--limit', '1', '--offset', '1')).ledger.map((entry: { amount: number }) => entry.amount)).toEqual([200_000]);
      // The command line's page bounds are the HTTP lists' own.
      const tooLong = await human('wallet', 'show', shopA.id, '--limit', String(MAX_OPERATOR_PAGE_SIZE + 1));
      expect(tooLong.code).toBe(1);
      expect(tooLong.stderr).toContain(`--limit must be 1 to ${MAX_OPERATOR_PAGE_SIZE}`);
      expect((await human('activity', shopA.id, '--limit', String(MAX_ACTIVITY_PAGE_SIZE + 1))).stderr).toContain(`--limit must be 1 to ${MAX_ACTIVITY_PAGE_SIZE}`);
      expect((await admin('workspaces', 'show', shopA.id)).balance).toBe(205_000);

      const credit = await admin('wallet', 'credit', shopA.id, '1500', '--reason', 'goodwill for the outage');
      expect(credit).toMatchObject({ balance: 206_500, entry: { kind: 'adjustment', amount: 1500, note: 'goodwill for the outage' } });
      const debit = await admin('wallet', 'debit', shopA.id, '1500', '--reason', 'goodwill entered on the wrong shop');
      expect(debit).toMatchObject({ balance: 205_000, entry: { kind: 'adjustment', amount: -1500, balance_after: 205_000 } });
      const withoutReason = await human('wallet', 'debit', shopA.id, '100');
      expect(withoutReason.code).toBe(1);
      expect(withoutReason.stderr).toContain('--reason is required');
      const belowZero = await human('wallet', 'debit', shopA.id, '205001', '--reason', 'x');
      expect(belowZero.code).toBe(1);
      expect(belowZero.stderr).toContain('would take the balance below zero: it holds 205000 VND');
      expect((await admin('wallet', 'show', shopA.id)).balance).toBe(205_000);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'creates keys (the key shown once), lists them without it, sets the webhook and revokes',
    async () => {
      key = await admin('keys', 'create', shopA.id, '--scopes', 'templates:read,messages:send,messages:read', '--name', 'backend', '--rate-limit', '30');
      expect(key).toMatchObject({
        id: expect.stringMatching(/^key_/),
        workspace_id: shopA.id,
        name: 'backend',
        scopes: ['templates:read', 'messages:send', 'messages:read'],
        rate_limit_per_second: 30,
        webhook_url: null,
        revoked_at: null,
        key: expect.stringMatching(/^tms_live_/),
      });
      spareKey = await admin('keys', 'create', shopA.id, '--scopes', 'messages:send', '--webhook-url', 'https://hooks.example.com/spare');
      expect(spareKey.webhook_url).toBe('https://hooks.example.com/spare');

      const listed = await runTms(['admin', 'keys', 'list', shopA.id, '--json'], env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).not.toContain(key.key);
      expect(listed.stdout).not.toContain(spareKey.key);
      const list = JSON.parse(listed.stdout);
      expect(list.count).toBe(2);
      expect(list.api_keys.map((row: { id: string }) => row.id).sort()).toEqual([key.id, spareKey.id].sort());
      for (const row of list.api_keys) expect(row).not.toHaveProperty('key');

      expect((await admin('keys', 'set-webhook', key.id, 'https://hooks.example.com/tms')).webhook_url).toBe('https://hooks.example.com/tms');
      expect((await admin('keys', 'set-webhook', spareKey.id, 'none')).webhook_url).toBeNull();
      expect((await admin('keys', 'set-rate-limit', key.id, '120')).rate_limit_per_second).toBe(120);
      expect((await admin('keys', 'set-rate-limit', spareKey.id, '5')).rate_limit_per_second).toBe(5);
      expect((await admin('keys', 'set-rate-limit', spareKey.id, 'none')).rate_limit_per_second).toBeNull();
      const rateChanges = (await admin('audit', '--workspace', shopA.id)).entries.filter((entry: { action: string }) => entry.action === 'api_key.rate_limit_change');
      expect(rateChanges.map((entry: { target: string; before: unknown; after: unknown }) => [entry.target, entry.before, entry.after])).toEqual([
        [spareKey.id, { rate_limit_per_second: 5 }, { rate_limit_per_second: null }],
        [spareKey.id, { rate_limit_per_second: null }, { rate_limit_per_second: 5 }],
        [key.id, { rate_limit_per_second: 30 }, { rate_limit_per_second: 120 }],
      ]);

      const revoked = await admin('keys', 'revoke', spareKey.id);
      expect(revoked).toMatchObject({ id: spareKey.id, revoked_at: expect.any(String) });
      expect(revoked).not.toHaveProperty('key');
      const after = await admin('keys', 'list', shopA.id);
      expect(after.api_keys.find((row: { id: string }) => row.id === spareKey.id).revoked_at).toBe(revoked.revoked_at);
      expect(after.api_keys.find((row: { id: string }) => row.id === key.id)).toMatchObject({ revoked_at: null, webhook_url: 'https://hooks.example.com/tms' });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'connects a sender account without ever printing its secrets, and registers templates from a file',
    async () => {
      const rsaFile = join(files, 'oa-public.pem');
      const rsaKey = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----';
      writeFileSync(rsaFile, `${rsaKey}\n`);
      const connected = await runTms(
        [
          'admin', 'sender-accounts', 'connect', shopA.id,
          '--oa-id', oaId, '--name', 'Shop A OA', '--daily-quota', '3000', '--app-id', 'app-77',
          '--app-secret', appSecret, '--refresh-token', refreshToken,
          '--default-mode', 'hashphone', '--rsa-public-key-file', rsaFile, '--no-verify', '--json',
        ],
        env,
      );
      expect(connected.code, connected.stderr).toBe(0);
      expect(connected.stdout).not.toContain(appSecret);
      expect(connected.stdout).not.toContain(refreshToken);
      expect(JSON.parse(connected.stdout)).toMatchObject({
        oa_id: oaId,
        workspace_id: shopA.id,
        name: 'Shop A OA',
        default_mode: 'hashphone',
        daily_quota: 3000,
        status: 'connected',
        app_id: 'app-77',
        rsa_public_key: rsaKey,
      });
      const accounts = await runTms(['admin', 'sender-accounts', 'list', shopA.id, '--json'], env);
      expect(accounts.stdout).not.toContain(appSecret);
      expect(accounts.stdout).not.toContain(refreshToken);
      expect(JSON.parse(accounts.stdout)).toMatchObject({ count: 1, sender_accounts: [{ oa_id: oaId, name: 'Shop A OA' }] });

      const stolen = await human('sender-accounts', 'connect', shopB.id, '--oa-id', oaId, '--name', 'B', '--daily-quota', '1', '--app-id', 'a', '--app-secret', 's', '--refresh-token', 'r');
      expect(stolen.code).not.toBe(0);
      expect(stolen.stderr).toContain(oaId);

      const templateFile = join(files, 'template.json');
      const template = {
        template_id: templateId,
        name: 'Order confirmation',
        status: 'ENABLE',
        template_type: 1,
        oa_id: oaId,
        preview_url: 'https://example.com/preview/order',
        price: 350,
        params: [
          { name: 'customer_name', required: true, max_length: 30, min_length: 1 },
          { name: 'order_code', type: 'STRING', required: true, max_length: 20, min_length: 1 },
        ],
      };
      writeFileSync(templateFile, JSON.stringify(template));
      const registered = await admin('templates', 'register', shopA.id, '--file', templateFile, '--no-verify');
      expect(registered).toMatchObject({ template_id: templateId, status: 'ENABLE', price: 350, oa_id: oaId, oa_name: 'Shop A OA', workspace_id: shopA.id });
      expect(registered.params[0]).toEqual({ name: 'customer_name', type: 'STRING', required: true, max_length: 30, min_length: 1 });

      writeFileSync(templateFile, JSON.stringify({ ...template, price: 400, status: 'DISABLE' }));
      expect(await admin('templates', 'register', shopA.id, '--file', templateFile, '--no-verify')).toMatchObject({ template_id: templateId, price: 400, status: 'DISABLE' });
      writeFileSync(templateFile, JSON.stringify({ ...template, price: 400 }));
      await admin('templates', 'register', shopA.id, '--file', templateFile, '--no-verify');

      const templates = await admin('templates', 'list', shopA.id);
      expect(templates.count).toBe(1);
      expect(templates.templates[0]).toMatchObject({ template_id: templateId, status: 'ENABLE', price: 400 });

      writeFileSync(templateFile, JSON.stringify({ ...template, status: 'ON' }));
      const badStatus = await human('templates', 'register', shopA.id, '--file', templateFile, '--no-verify');
      expect(badStatus.code).not.toBe(0);
      expect(badStatus.stderr).toContain('status');
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'prints readable field names and values without --json',
    async () => {
      const show = await human('workspaces', 'show', shopA.id);
      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(new RegExp(`^id\\s+${shopA.id}$`, 'm'));
      expect(show.stdout).toMatch(/^name\s+Shop A$/m);
      expect(show.stdout).toMatch(/^status\s+active$/m);
      expect(show.stdout).toMatch(/^balance\s+205000$/m);
      expect(show.stdout).toMatch(/^message_cap\s+-$/m);
      expect(() => JSON.parse(show.stdout)).toThrow();

      const list = await human('workspaces', 'list');
      const lines = list.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^id\s+name\s+status\s+balance/);
      expect(lines.find((line) => line.startsWith(shopA.id))).toMatch(/Shop A\s+active\s+205000/);
      expect(lines.find((line) => line.startsWith(shopB.id))).toMatch(/Shop B\s+active\s+0/);

      const wallet = await human('wallet', 'show', shopA.id);
      expect(wallet.stdout).toContain(`workspace_id: ${shopA.id}`);
      expect(wallet.stdout).toContain('balance: 205000');
      expect(wallet.stdout).toMatch(/top_up\s+5000/);
      expect(wallet.stdout).toContain('bank transfer 42');

      const keys = await human('keys', 'list', shopA.id);
      expect(keys.stdout).toMatch(/^id\s+workspace_id\s+name\s+key_prefix/m);
      expect(keys.stdout).toContain(key.key_prefix);
      expect(keys.stdout).not.toContain(key.key);

      const templates = await human('templates', 'list', shopA.id);
      expect(templates.stdout).toMatch(new RegExp(`${templateId}\\s+Order confirmation\\s+ENABLE`));

      const empty = await human('sender-accounts', 'list', shopB.id);
      expect(empty.code).toBe(0);
      expect(empty.stdout).toContain('(no sender_accounts)');
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'refuses bad values with a message and unknown workspaces and keys with exit code 4, changing nothing',
    async () => {
      // Independent refusals: run them side by side.
      const [badScope, badWebhook, badAmount, negative, negativeAfterDashes, badCap, zeroRate, badRate, badOffset] = await Promise.all([
        human('keys', 'create', shopA.id, '--scopes', 'messages:send,messages:delete'),
        human('keys', 'set-webhook', key.id, 'ftp://hooks.example.com/x'),
        human('wallet', 'top-up', shopA.id, 'lots'),
        human('wallet', 'top-up', shopA.id, '-5000'),
        human('wallet', 'top-up', shopA.id, '--', '-5000'),
        human('workspaces', 'set-cap', shopA.id, 'unlimited'),
        human('keys', 'set-rate-limit', key.id, '0'),
        human('keys', 'set-rate-limit', key.id, 'fast'),
        human('wallet', 'show', shopA.id, '--offset', 'next'),
      ]);
      expect(badScope.code).not.toBe(0);
      expect(badScope.code).not.toBe(4);
      expect(badScope.stderr).toContain('messages:delete');
      expect(badWebhook.code).not.toBe(0);
      expect(badWebhook.stderr).toContain('webhook_url');
      expect(badAmount.code).not.toBe(0);
      expect(badAmount.stderr).toContain('amount');
      expect(negative.code).not.toBe(0);
      expect(negative.stderr).toContain('-5000: amounts, caps and limits are whole numbers, 0 or more');
      expect(negative.stderr).not.toMatch(STACK_FRAME);
      expect(negativeAfterDashes.code).not.toBe(0);
      expect(negativeAfterDashes.stderr).toContain('-5000: amounts, caps and limits are whole numbers, 0 or more');
      expect(badCap.code).not.toBe(0);
      expect(badCap.stderr).toContain('cap');
      expect(zeroRate.code).toBe(1);
      expect(zeroRate.stderr).toContain('rate_limit_per_second must be a whole number from 1 to 1000000');
      expect(badRate.code).toBe(1);
      expect(badRate.stderr).toContain('rate limit must be a whole number');
      expect(badOffset.code).toBe(1);
      expect(badOffset.stderr).toContain('--offset must be a whole number');

      const unknownIds = [
        ['workspaces', 'show', 'ws_nope'],
        ['workspaces', 'suspend', 'ws_nope'],
        ['workspaces', 'set-cap', 'ws_nope', '5'],
        ['wallet', 'top-up', 'ws_nope', '100'],
        ['wallet', 'show', 'ws_nope'],
        ['keys', 'create', 'ws_nope', '--scopes', 'messages:send'],
        ['keys', 'revoke', 'key_nope'],
        ['keys', 'set-webhook', 'key_nope', 'none'],
        ['keys', 'set-rate-limit', 'key_nope', '10'],
        ['sender-accounts', 'list', 'ws_nope'],
        ['templates', 'list', 'ws_nope'],
      ];
      const results = await Promise.all(unknownIds.map((args) => human(...args)));
      results.forEach((result, index) => {
        const args = unknownIds[index]!;
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(4);
        expect(result.stderr).toContain(args[2]!);
        expect(result.stderr).not.toMatch(STACK_FRAME);
      });

      // None of the refused commands changed anything.
      expect(await admin('wallet', 'show', shopA.id)).toMatchObject({ balance: 205_000, count: 4 });
      expect((await admin('workspaces', 'list')).count).toBe(2);
      expect((await admin('keys', 'list', shopA.id)).count).toBe(2);
      expect((await admin('keys', 'list', shopA.id)).api_keys.find((row: { id: string }) => row.id === key.id).rate_limit_per_second).toBe(120);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'shares one store with the HTTP API of a gateway on the same database',
    async () => {
      const port = await freePort();
      const gateway = startTms(['api'], { ...env, PORT: String(port), TMS_DEMO_SEED: 'false', TMS_AUTH_CACHE_MS: '0' });
      try {
        await gateway.waitForOutput(/operator token: .*\n/);
        const url = `http://127.0.0.1:${port}`;
        expect(gateway.stdout()).toContain(`TMS gateway listening on ${url}`);
        const operatorToken = kind === 'postgres' ? env.TMS_ADMIN_TOKEN! : JSON.parse(readFileSync(join(env.TMS_DATA_DIR!, 'secrets.json'), 'utf8')).adminToken;

        // What the CLI made, the HTTP API serves.
        const templates = await httpRequest(url, 'GET', '/api/v1/templates', { key: key.key });
        expect(templates.status).toBe(200);
        expect(templates.body.templates).toEqual([expect.objectContaining({ template_id: templateId, price: 400, status: 'ENABLE', oa_name: 'Shop A OA' })]);
        expect((await httpRequest(url, 'GET', '/api/v1/templates', { key: spareKey.key })).status).toBe(401);
        const workspace = await httpRequest(url, 'GET', `/admin/v1/workspaces/${shopA.id}`, { key: operatorToken });
        expect(workspace.status).toBe(200);
        expect(workspace.body).toMatchObject({ id: shopA.id, balance: 205_000 });

        // What the HTTP API does, the CLI sees.
        const sent = await httpRequest(url, 'POST', '/api/v1/messages/send', {
          key: key.key,
          body: { template_id: templateId, phone: '0912345678', template_data: { customer_name: 'Lê Thị B', order_code: 'DH-1' } },
        });
        expect(sent.status, sent.text).toBe(202);
        const wallet = await admin('wallet', 'show', shopA.id);
        expect(wallet.balance).toBe(205_000 - 400);
        expect(wallet.ledger[0]).toMatchObject({ kind: 'charge', amount: -400, reference: sent.body.msg_id });

        // And a change made with the CLI reaches the running gateway.
        await admin('workspaces', 'suspend', shopA.id);
        expect((await httpRequest(url, 'GET', '/api/v1/templates', { key: key.key })).status).toBe(403);
        await admin('workspaces', 'resume', shopA.id);
        expect((await httpRequest(url, 'GET', '/api/v1/templates', { key: key.key })).status).toBe(200);
        await admin('keys', 'revoke', key.id);
        expect((await httpRequest(url, 'GET', '/api/v1/templates', { key: key.key })).status).toBe(401);

        expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await gateway.stop('SIGKILL');
      }
    },
    FLOW_TIMEOUT_MS,
  );
  it(
    "reads a sender account's secrets from a file, standard input or the environment, so they never need the command line",
    async () => {
      const shop = await admin('workspaces', 'create', '--name', 'Shop with secrets in a file');
      const connect = (oa: string) => ['admin', 'sender-accounts', 'connect', shop.id, '--oa-id', oa, '--name', `OA ${oa}`, '--daily-quota', '10', '--app-id', 'app-b', '--no-verify'];
      const fromFile = { app_secret: `file-secret-${randomBytes(6).toString('hex')}`, refresh_token: `file-refresh-${randomBytes(6).toString('hex')}`, oa_secret_key: 'file-oa-secret' };
      const secretsFile = join(files, 'oa-secrets.json');
      writeFileSync(secretsFile, JSON.stringify(fromFile), { mode: 0o600 });
      const fileOa = `oa${randomBytes(4).toString('hex')}`;
      const viaFile = await runTms([...connect(fileOa), '--secrets-file', secretsFile, '--json'], env);
      expect(viaFile.code, viaFile.stderr).toBe(0);
      expect(viaFile.stderr).toBe('');
      expect(JSON.parse(viaFile.stdout)).toMatchObject({ oa_id: fileOa, status: 'connected', has_oa_secret_key: true });

      const fromStdin = { app_secret: `stdin-secret-${randomBytes(6).toString('hex')}`, refresh_token: `stdin-refresh-${randomBytes(6).toString('hex')}` };
      const stdinOa = `oa${randomBytes(4).toString('hex')}`;
      const viaStdin = spawnSync(process.execPath, [TMS_BIN, ...connect(stdinOa), '--secrets-file', '-', '--json'], { cwd: REPO_ROOT, env: childEnvironment(env), input: JSON.stringify(fromStdin), encoding: 'utf8' });
      expect(viaStdin.status, viaStdin.stderr).toBe(0);
      expect(JSON.parse(viaStdin.stdout)).toMatchObject({ oa_id: stdinOa, status: 'connected', has_oa_secret_key: false });

      const fromEnvironment = {
        app_secret: `env-secret-${randomBytes(6).toString('hex')}`,
        refresh_token: `env-refresh-${randomBytes(6).toString('hex')}`,
        oa_secret_key: `env-oa-secret-${randomBytes(6).toString('hex')}`,
      };
      const secretsInEnvironment = {
        ...env,
        TMS_ZNS_APP_SECRET: fromEnvironment.app_secret,
        TMS_ZNS_REFRESH_TOKEN: fromEnvironment.refresh_token,
        TMS_ZNS_OA_SECRET_KEY: fromEnvironment.oa_secret_key,
      };
      const envOa = `oa${randomBytes(4).toString('hex')}`;
      const viaEnvironment = await runTms([...connect(envOa), '--secrets-env', '--json'], secretsInEnvironment);
      expect(viaEnvironment.code, viaEnvironment.stderr).toBe(0);
      expect(viaEnvironment.stderr).toBe('');
      expect(JSON.parse(viaEnvironment.stdout)).toMatchObject({ oa_id: envOa, status: 'connected', has_oa_secret_key: true });

      // The flags still work, with a warning that ps shows them.
      const fromFlags = { app_secret: `flag-secret-${randomBytes(6).toString('hex')}`, refresh_token: `flag-refresh-${randomBytes(6).toString('hex')}` };
      const flagOa = `oa${randomBytes(4).toString('hex')}`;
      const viaFlags = await runTms([...connect(flagOa), '--app-secret', fromFlags.app_secret, '--refresh-token', fromFlags.refresh_token, '--json'], env);
      expect(viaFlags.code, viaFlags.stderr).toBe(0);
      expect(viaFlags.stderr).toContain('warning: --app-secret, --refresh-token on the command line can be read by every user of this machine (ps)');
      expect(viaFlags.stderr).not.toContain(fromFlags.app_secret);
      expect(JSON.parse(viaFlags.stdout)).toMatchObject({ oa_id: flagOa, status: 'connected' });

      // What was stored is what each source held, encrypted under the master key.
      const { config } = resolveSecrets(parseConfig(env));
      const store = openStore(config.database);
      try {
        for (const [oa, secrets] of [[fileOa, fromFile], [stdinOa, fromStdin], [envOa, fromEnvironment], [flagOa, fromFlags]] as const) {
          const row = await store.db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', oa).executeTakeFirstOrThrow();
          expect(decryptSecret(row.encrypted_app_secret, config.masterKey!)).toBe(secrets.app_secret);
          expect(decryptSecret(row.encrypted_refresh_token, config.masterKey!)).toBe(secrets.refresh_token);
          expect(row.encrypted_oa_secret_key === null ? null : decryptSecret(row.encrypted_oa_secret_key, config.masterKey!)).toBe('oa_secret_key' in secrets ? secrets.oa_secret_key : null);
        }
      } finally {
        await store.close();
      }

      // One source at a time, and each one complete.
      const newOa = () => connect(`oa${randomBytes(4).toString('hex')}`);
      const refusals: [string[], Record<string, string>, string][] = [
        [[...newOa(), '--secrets-file', secretsFile, '--app-secret', 'x'], env, 'give the secrets in one place only'],
        [[...newOa(), '--secrets-env', '--secrets-file', secretsFile], secretsInEnvironment, 'give the secrets in one place only'],
        [[...newOa(), '--secrets-env', '--refresh-token', 'x'], secretsInEnvironment, 'give the secrets in one place only'],
        [[...newOa(), '--secrets-env'], { ...secretsInEnvironment, TMS_ZNS_REFRESH_TOKEN: '' }, '--secrets-env needs TMS_ZNS_REFRESH_TOKEN'],
        [[...newOa(), '--secrets-env'], env, '--secrets-env needs TMS_ZNS_APP_SECRET'],
        [newOa(), secretsInEnvironment, 'the secrets are required: --secrets-file FILE (- for standard input) or --secrets-env'],
      ];
      writeFileSync(secretsFile, JSON.stringify({ app_secret: 'only-this' }), { mode: 0o600 });
      refusals.push([[...newOa(), '--secrets-file', secretsFile], env, '--secrets-file needs refresh_token']);
      const results = await Promise.all(refusals.map(([args, environment]) => runTms(args, environment)));
      results.forEach((result, index) => {
        const [args, , message] = refusals[index]!;
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stderr, args.join(' ')).toContain(message);
      });
    },
    FLOW_TIMEOUT_MS,
  );
});

describe('tms admin usage errors', () => {
  let dataDir: string;
  const env = () => ({ TMS_DATA_DIR: dataDir, TMS_LOG_LEVEL: 'silent' });
  const human = (...args: string[]) => runTms(['admin', ...args], env());
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tms-cli-usage-'));
    const migrated = await runTms(['migrate'], env());
    if (migrated.code !== 0) throw new Error(`tms migrate exited ${migrated.code}: ${migrated.stderr}`);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it(
    'prints the usage for no verb or --help, and refuses unknown commands with it',
    async () => {
      const [usage, help, unknown, unknownVerb, topLevel] = await Promise.all([
        human(),
        human('--help'),
        human('frobnicate', 'things'),
        human('workspaces', 'delete', 'ws_x'),
        runTms(['frobnicate'], env()),
      ]);
      expect(usage.code).toBe(0);
      expect(usage.stdout).toContain('keys create WORKSPACE_ID --scopes');
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('sender-accounts connect WORKSPACE_ID --oa-id ID');
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('unknown command "tms admin frobnicate things"');
      expect(unknown.stderr).toContain('workspaces create --name NAME');
      expect(unknown.stderr).not.toMatch(STACK_FRAME);
      expect(unknownVerb.code).not.toBe(0);
      expect(unknownVerb.stderr).toContain('tms admin workspaces delete');
      expect(unknownVerb.stderr).toContain('workspaces list | show ID');
      expect(topLevel.code).toBe(2);
      expect(topLevel.stdout).toContain('tms <command>');
      expect(topLevel.stdout).toContain('migrate');
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'names the missing flag or the unknown option, without a stack trace',
    async () => {
      const cases: [string[], string][] = [
        [['workspaces', 'create'], '--name'],
        [['workspaces', 'create', '--name', ''], '--name'],
        [['keys', 'create', 'ws_x'], '--scopes'],
        [['sender-accounts', 'connect', 'ws_x', '--oa-id', 'oa-x', '--name', 'X', '--app-id', 'a', '--app-secret', 's', '--refresh-token', 'r'], '--daily-quota'],
        [['sender-accounts', 'connect', 'ws_x', '--oa-id', 'oa-x', '--name', 'X', '--daily-quota', '5', '--app-id', 'a', '--refresh-token', 'r'], '--app-secret'],
        [['templates', 'register', 'ws_x'], '--file'],
        [['workspaces', 'show'], 'workspace id'],
        [['workspaces', 'list', '--colour'], '--colour'],
        [['workspaces', 'create', '--name'], '--name'],
      ];
      const results = await Promise.all(cases.map(([args]) => human(...args)));
      results.forEach((result, index) => {
        const [args, named] = cases[index]!;
        expect(result.code, args.join(' ')).not.toBe(0);
        expect(result.code, args.join(' ')).not.toBe(4);
        expect(result.stderr, args.join(' ')).toContain(named);
        expect(result.stderr, args.join(' ')).not.toMatch(STACK_FRAME);
      });
    },
    FLOW_TIMEOUT_MS,
  );
});
