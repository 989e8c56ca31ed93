/**
 * The README quick start, as a new user meets it: `tms start` on a fresh data directory prints
 * its address, the operator token and a demo workspace whose printed requests work as printed.
 * Also `tms migrate` and `tms worker` as processes.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, createTestDatabase, httpRequest, type TestDatabase } from '../harness.ts';
import { freePort, killAllTms, runTms, startTms, type RunningTms } from './processes.ts';

const PROCESS_TIMEOUT_MS = 180_000;
const BANNER = 'TMS gateway listening on';
/** Logged (at the default level, info) after the banner: the banner is complete once this shows. */
const STARTED = '"msg":"tms started"';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tms-quick-start-'));
  tempDirs.push(dir);
  return dir;
}

afterAll(async () => {
  await killAllTms();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

interface Banner {
  url: string;
  operatorToken: string;
  generatedLine: string | undefined;
  demo:
    | {
        workspaceId: string;
        createdNow: boolean;
        apiKey: string;
        consoleUrl: string;
        ownerEmail: string;
        ownerPassword: string;
        templatesUrl: string;
        sendUrl: string;
        sendBody: string;
        messagesUrl: string;
      }
    | undefined;
}

function match(text: string, pattern: RegExp, what: string): RegExpMatchArray {
  const found = text.match(pattern);
  if (!found) throw new Error(`the banner has no ${what}:\n${text}`);
  return found;
}

/** Reads what an operator reads off the terminal. */
function parseBanner(stdout: string): Banner {
  const start = stdout.indexOf(BANNER);
  const end = stdout.indexOf(STARTED);
  const text = stdout.slice(start, end === -1 ? undefined : end);
  const url = match(text, /TMS gateway listening on (http:\/\/\S+)/, 'address')[1]!;
  const operatorToken = match(text, /operator token: (\S+)/, 'operator token')[1]!;
  const generatedLine = text.split('\n').find((line) => line.includes('generated'));
  if (!text.includes('Demo workspace')) return { url, operatorToken, generatedLine, demo: undefined };
  const demoLine = match(text, /Demo workspace (ws_\S+)( \(created now\))?:/, 'demo workspace');
  const owner = match(text, /e-mail (\S+) {3}password (\S+)/, 'console sign-in');
  return {
    url,
    operatorToken,
    generatedLine,
    demo: {
      workspaceId: demoLine[1]!,
      createdNow: demoLine[2] !== undefined,
      apiKey: match(text, /export TMS_API_KEY=(\S+)/, 'API key')[1]!,
      consoleUrl: match(text, /console: +(http:\/\/\S+\/console)\n/, 'console address')[1]!,
      ownerEmail: owner[1]!,
      ownerPassword: owner[2]!,
      templatesUrl: match(text, /curl -s (\S+\/api\/v1\/templates) -H "Authorization: Bearer \$TMS_API_KEY"/, 'templates request')[1]!,
      sendUrl: match(text, /curl -s (\S+\/api\/v1\/messages\/send) -H "Authorization: Bearer \$TMS_API_KEY" -H 'Content-Type: application\/json'/, 'send request')[1]!,
      sendBody: match(text, /\\\n\s+-d '([^']+)'/, 'send body')[1]!,
      messagesUrl: match(text, /curl -s "(\S+\/api\/v1\/messages\?limit=5)" -H "Authorization: Bearer \$TMS_API_KEY"/, 'messages request')[1]!,
    },
  };
}

async function startGateway(env: Record<string, string>): Promise<{ gateway: RunningTms; banner: Banner }> {
  const gateway = startTms(['start'], env);
  await gateway.waitForOutput(BANNER);
  await gateway.waitForOutput(STARTED);
  return { gateway, banner: parseBanner(gateway.stdout()) };
}

/** A request as the printed curl line makes it. */
async function call(url: string, apiKey: string, body?: string) {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

describe('quick start: tms start on a fresh embedded data directory', () => {
  const dataDir = join(tempDir(), 'data');
  let first: Banner;
  let sentMessageId: string;

  it(
    'prints the address, the operator token and a demo whose printed requests work',
    async () => {
      const port = await freePort();
      const { gateway, banner } = await startGateway({ TMS_DATA_DIR: dataDir, PORT: String(port) });
      try {
        first = banner;
        expect(banner.url).toBe(`http://127.0.0.1:${port}`);
        expect(gateway.stdout()).toContain(`SQLite ${join(dataDir, 'tms.sqlite')}`);
        expect(banner.generatedLine).toContain('TMS_ADMIN_TOKEN');
        expect(banner.generatedLine).toContain('TMS_MASTER_KEY');
        expect(banner.generatedLine).toContain(join(dataDir, 'secrets.json'));

        const secretsFile = join(dataDir, 'secrets.json');
        expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
        expect(JSON.parse(readFileSync(secretsFile, 'utf8')).adminToken).toBe(banner.operatorToken);

        const demo = banner.demo!;
        expect(demo).toBeDefined();
        expect(demo.createdNow).toBe(true);
        expect(demo.apiKey).toMatch(/^tms_live_/);
        for (const url of [demo.templatesUrl, demo.sendUrl, demo.messagesUrl]) expect(url.startsWith(banner.url)).toBe(true);
        // `tms start` alone refuses webhooks to this machine by default, and says what allows them.
        expect(gateway.stdout()).toContain('Delivery-report webhooks to this machine (tms-client listen) need TMS_WEBHOOK_ALLOW_PRIVATE=true.');

        const templates = await call(demo.templatesUrl, demo.apiKey);
        expect(templates.status, templates.text).toBe(200);
        expect(templates.body.templates.map((template: { template_id: string }) => template.template_id)).toEqual(['250001', '250002', '250003']);
        for (const template of templates.body.templates) expect(template).toMatchObject({ status: 'ENABLE', oa_id: '4318269720189301001' });

        const sent = await call(demo.sendUrl, demo.apiKey, demo.sendBody);
        expect(sent.status, sent.text).toBe(202);
        expect(sent.body).toMatchObject({ msg_id: expect.stringMatching(/^msg_/), status: 'queued' });
        sentMessageId = sent.body.msg_id;

        const messages = await call(demo.messagesUrl, demo.apiKey);
        expect(messages.status, messages.text).toBe(200);
        expect(messages.body.messages.map((message: { msg_id: string }) => message.msg_id)).toContain(sentMessageId);

        const workspaces = await httpRequest(banner.url, 'GET', '/admin/v1/workspaces', { key: banner.operatorToken });
        expect(workspaces.status).toBe(200);
        expect(workspaces.body.workspaces).toEqual([expect.objectContaining({ id: demo.workspaceId, is_demo: true, status: 'active' })]);
        const wallet = await httpRequest(banner.url, 'GET', `/admin/v1/workspaces/${demo.workspaceId}/wallet`, { key: banner.operatorToken });
        expect(wallet.body.balance).toBe(1_000_000 - templates.body.templates.find((template: { template_id: string }) => template.template_id === '250002').price);
        expect((await httpRequest(banner.url, 'GET', '/admin/v1/workspaces', { key: demo.apiKey })).status).toBe(401);

        // The printed console sign-in works: the demo workspace's owner.
        expect(demo.consoleUrl).toBe(`${banner.url}/console`);
        const signedIn = await httpRequest(banner.url, 'POST', '/console/api/session', { body: { email: demo.ownerEmail, password: demo.ownerPassword } });
        expect(signedIn.status, signedIn.text).toBe(200);
        expect(signedIn.body).toMatchObject({ user: { email: 'owner@demo.tms.local', role: 'owner' }, workspace: { id: demo.workspaceId } });

        expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await gateway.stop('SIGKILL');
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'starts again on the same directory without a second demo workspace, with the same key and secrets',
    async () => {
      expect(first?.demo).toBeDefined();
      const port = await freePort();
      const { gateway, banner } = await startGateway({ TMS_DATA_DIR: dataDir, PORT: String(port), TMS_WEBHOOK_ALLOW_PRIVATE: 'true' });
      try {
        expect(banner.generatedLine).toBeUndefined();
        expect(banner.operatorToken).toBe(first.operatorToken);
        expect(banner.demo).toMatchObject({
          workspaceId: first.demo!.workspaceId,
          createdNow: false,
          apiKey: first.demo!.apiKey,
          ownerEmail: first.demo!.ownerEmail,
          ownerPassword: first.demo!.ownerPassword,
        });
        expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);

        const templates = await call(banner.demo!.templatesUrl, banner.demo!.apiKey);
        expect(templates.status).toBe(200);
        expect(templates.body.count).toBe(3);
        const message = await call(`${banner.url}/api/v1/messages/${sentMessageId}`, banner.demo!.apiKey);
        expect(message.status).toBe(200);
        expect(message.body.msg_id).toBe(sentMessageId);

        const workspaces = await httpRequest(banner.url, 'GET', '/admin/v1/workspaces', { key: banner.operatorToken });
        expect(workspaces.body.count).toBe(1);
        const keys = await httpRequest(banner.url, 'GET', `/admin/v1/workspaces/${first.demo!.workspaceId}/api-keys`, { key: banner.operatorToken });
        expect(keys.body.count).toBe(1);
        // With private targets allowed, the banner shows how to point the demo key at a local receiver.
        expect(gateway.stdout()).toContain(`export TMS_ADMIN_TOKEN=${banner.operatorToken}`);
        expect(gateway.stdout()).toContain(`curl -s -X PATCH ${banner.url}/admin/v1/api-keys/${keys.body.api_keys[0].id} -H "Authorization: Bearer $TMS_ADMIN_TOKEN"`);
        const accounts = await httpRequest(banner.url, 'GET', `/admin/v1/workspaces/${first.demo!.workspaceId}/sender-accounts`, { key: banner.operatorToken });
        expect(accounts.body.count).toBe(1);

        expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await gateway.stop('SIGKILL');
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'prints no demo with TMS_DEMO_SEED=false and creates no workspace',
    async () => {
      const port = await freePort();
      const { gateway, banner } = await startGateway({ TMS_DATA_DIR: tempDir(), PORT: String(port), TMS_DEMO_SEED: 'false' });
      try {
        expect(banner.demo).toBeUndefined();
        expect(gateway.stdout()).not.toContain('TMS_API_KEY');
        expect(banner.generatedLine).toContain('secrets.json');
        const workspaces = await httpRequest(banner.url, 'GET', '/admin/v1/workspaces', { key: banner.operatorToken });
        expect(workspaces.status).toBe(200);
        expect(workspaces.body.count).toBe(0);
        expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await gateway.stop('SIGKILL');
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'adds no demo to a directory the operator already set up with tms migrate and tms admin',
    async () => {
      const dir = tempDir();
      const migrated = await runTms(['migrate'], { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent' });
      expect(migrated.code, migrated.stderr).toBe(0);
      const created = await runTms(['admin', 'workspaces', 'create', '--name', 'Production shop', '--json'], { TMS_DATA_DIR: dir, TMS_LOG_LEVEL: 'silent' });
      expect(created.code, created.stderr).toBe(0);
      const port = await freePort();
      const { gateway, banner } = await startGateway({ TMS_DATA_DIR: dir, PORT: String(port) });
      try {
        expect(banner.demo).toBeUndefined();
        expect(gateway.stdout()).not.toContain('TMS_API_KEY');
        const workspaces = await httpRequest(banner.url, 'GET', '/admin/v1/workspaces', { key: banner.operatorToken });
        expect(workspaces.body.workspaces).toEqual([expect.objectContaining({ id: JSON.parse(created.stdout).id, is_demo: false })]);
        expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await gateway.stop('SIGKILL');
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});

describe.each(STORE_KINDS)('tms start, migrate and worker as processes (%s)', (kind) => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await killAllTms();
    for (const database of databases) await database.drop();
  });

  async function freshEnvironment(): Promise<Record<string, string>> {
    const database = await createTestDatabase(kind);
    databases.push(database);
    const env = { ...database.env };
    if (kind === 'postgres') Object.assign(env, { TMS_ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`, TMS_MASTER_KEY: randomBytes(32).toString('hex') });
    return env;
  }

  it(
    kind === 'sqlite' ? 'seeds the demo on a new embedded directory' : 'never seeds a demo with DATABASE_URL, even on an empty database',
    async () => {
      const env = await freshEnvironment();
      const port = await freePort();
      const { gateway, banner } = await startGateway({ ...env, PORT: String(port) });
      try {
        const workspaces = await httpRequest(banner.url, 'GET', '/admin/v1/workspaces', { key: env.TMS_ADMIN_TOKEN ?? banner.operatorToken });
        expect(workspaces.status).toBe(200);
        if (kind === 'sqlite') {
          expect(banner.demo).toBeDefined();
          expect(workspaces.body.count).toBe(1);
        } else {
          expect(banner.demo).toBeUndefined();
          expect(gateway.stdout()).toContain('PostgreSQL (DATABASE_URL)');
          expect(gateway.stdout()).toContain('operator token: from TMS_ADMIN_TOKEN');
          expect(gateway.stdout()).not.toContain(env.TMS_ADMIN_TOKEN!);
          expect(banner.generatedLine).toBeUndefined();
          expect(existsSync(join(env.TMS_DATA_DIR!, 'secrets.json'))).toBe(false);
          expect(workspaces.body.count).toBe(0);
        }
        expect(await gateway.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await gateway.stop('SIGKILL');
      }
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'tms migrate applies the migrations once, then reports the database up to date',
    async () => {
      const env = await freshEnvironment();
      const firstRun = await runTms(['migrate'], env);
      expect(firstRun.code, firstRun.stderr).toBe(0);
      expect(firstRun.stdout).toMatch(/^applied: 0001_initial(, \d{4}_\w+)*$/m);
      const secondRun = await runTms(['migrate'], env);
      expect(secondRun.code, secondRun.stderr).toBe(0);
      expect(secondRun.stdout.trim()).toBe('database is up to date');
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'tms worker runs without the HTTP API and exits 0 on SIGTERM',
    async () => {
      const env = await freshEnvironment();
      // Its probes' server takes PORT like `tms api`'s: any free one here.
      const worker = startTms(['worker'], { ...env, PORT: '0' });
      try {
        await worker.waitForOutput(STARTED);
        expect(worker.stdout()).not.toContain(BANNER);
        expect(worker.stdout()).toMatch(/"roles":\{"api":false,"worker":true\}/);
        expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
        expect(worker.stdout()).toContain('shutting down');
        expect(worker.stderr()).toBe('');
      } finally {
        await worker.stop('SIGKILL');
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
