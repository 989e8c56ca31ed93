/**
 * Master key rotation with real `tms` processes on both stores: secrets written under the old key
 * (including ones in the first ciphertext format, without a key id) are re-encrypted by
 * `tms admin rotate-master-key` while a `tms start` holding both keys keeps sending and signing
 * delivery-report webhooks; a second run changes nothing; afterwards the new key alone reads
 * everything, and a process left with only the old key fails loudly, naming the key it lacks: a
 * serving one refuses to start (exit 78) rather than fail the sends it cannot prepare.
 * The embedded variant rotates the key kept in the data directory's secrets.json.
 * POST /admin/v1/master-key/rotation runs the same re-encryption in the process that answers, with
 * its keys; both ways are audited with counts only.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningSimulator } from '@tms/zns-sim';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { decryptSecret, encryptSecret, isSealedUnder, masterKeyId } from '../../src/lib/crypto.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { expectError, expectStatus } from '../api/helpers.ts';
import { createTestDatabase, freePort, gatewayEnvironment, httpRequest, seedWorkspace, startTestGateway, STORE_KINDS, type TestDatabase, type TestGateway, type TestResponse } from '../harness.ts';
import {
  createHookKey,
  eventsTo,
  expectOk,
  hooksFor,
  nextPhone,
  OTP_TEMPLATE,
  seedDemoWorkspace,
  startQuietSimulator,
  startReceiver,
  TEST_WEBHOOK_ENV,
  verifyHook,
  waitFor,
  type Admin,
  type HookKey,
  type Receiver,
} from '../webhooks/support.ts';
import { killAllTms, runAdminJson, runTms, startTms, type CliResult, type RunningTms } from './processes.ts';

const TEST_TIMEOUT_MS = 300_000;
const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
const SECRET_COLUMNS = {
  api_keys: ['encrypted_key'],
  sender_accounts: ['encrypted_app_secret', 'encrypted_refresh_token', 'encrypted_access_token', 'encrypted_oa_secret_key'],
} as const;

/** A secret as the first format stored it: base64(iv | tag | ciphertext), no key id. */
function sealInFirstFormat(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

interface Gateway extends Admin {
  readonly tms: RunningTms;
  readonly url: string;
  send(key: HookKey): Promise<string>;
}

interface Stack {
  database: TestDatabase;
  simulator: RunningSimulator;
  receiver: Receiver;
  port: number;
  /** The environment every process shares; keys are added per process. */
  env: Record<string, string>;
}

let stack: Stack | undefined;
let store: Store | undefined;

afterEach(async () => {
  await killAllTms();
  await store?.close();
  store = undefined;
  if (stack) {
    await stack.simulator.close();
    await stack.receiver.close();
    await stack.database.drop();
  }
  stack = undefined;
});

async function startStack(kind: 'sqlite' | 'postgres', overrides: Record<string, string> = {}): Promise<Stack> {
  const database = await createTestDatabase(kind);
  const simulator = await startQuietSimulator();
  const receiver = await startReceiver();
  const port = await freePort();
  const env = gatewayEnvironment(database, {
    ...TEST_WEBHOOK_ENV,
    ZNS_OAUTH_URL: simulator.url,
    ZNS_API_URL: simulator.url,
    PORT: String(port),
    TMS_ADMIN_TOKEN: ADMIN_TOKEN,
    TMS_LOG_LEVEL: 'error',
    ...overrides,
  });
  stack = { database, simulator, receiver, port, env };
  return stack;
}

/** A real `tms start` (API and workers in their thread) with these master keys. */
async function startGateway(current: Stack, keys: Record<string, string>): Promise<Gateway> {
  const tms = startTms(['start'], { ...current.env, ...keys });
  await tms.waitForOutput('TMS gateway listening');
  const url = `http://127.0.0.1:${current.port}`;
  eventsTo(current.simulator, url);
  return {
    tms,
    url,
    admin: (method: string, path: string, body?: unknown): Promise<TestResponse> => httpRequest(url, method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body }),
    send: async (key) => {
      const response = await httpRequest(url, 'POST', '/api/v1/messages/send', {
        key: key.key,
        body: { template_id: OTP_TEMPLATE, phone: nextPhone(), template_data: { otp: '123456' } },
      });
      return expectOk(response, 'send').body.msg_id as string;
    },
  };
}

async function stopGateway(gateway: Gateway): Promise<void> {
  expect(await gateway.tms.stop()).toEqual({ code: 0, signal: null });
}

/** Waits for the message's delivery report and checks its signature with the key, as a customer would. */
async function expectSignedReport(receiver: Receiver, msgId: string, key: HookKey): Promise<void> {
  const [hook] = await waitFor(() => hooksFor(receiver, msgId), (hooks) => hooks.length > 0, `delivery report of ${msgId}`, 60_000);
  expect(verifyHook(hook!, key.key)).toMatchObject({ message_id: msgId });
}

function rotate(current: Stack, keys: Record<string, string>, flags: string[] = []): Promise<CliResult> {
  return runTms(['admin', 'rotate-master-key', ...flags, '--json'], { ...current.env, TMS_LOG_LEVEL: 'silent', ...keys });
}

async function rotateOk(current: Stack, keys: Record<string, string>, flags: string[] = []): Promise<any> {
  const result = await rotate(current, keys, flags);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** Every stored secret, by table, column and row. */
async function storedSecrets(db: Store['db']): Promise<{ where: string; sealed: string }[]> {
  const secrets: { where: string; sealed: string }[] = [];
  for (const row of await db.selectFrom('api_keys').selectAll().execute()) secrets.push({ where: `api_keys ${row.id}`, sealed: row.encrypted_key });
  for (const row of await db.selectFrom('sender_accounts').selectAll().execute()) {
    for (const column of SECRET_COLUMNS.sender_accounts) {
      const sealed = row[column];
      if (sealed !== null) secrets.push({ where: `sender_accounts ${row.oa_id} ${column}`, sealed });
    }
  }
  return secrets;
}

const NOTHING = { api_key_signing_secrets: 0, app_secrets: 0, refresh_tokens: 0, access_tokens: 0, oa_secret_keys: 0 };

describe.each(STORE_KINDS)('rotating TMS_MASTER_KEY with live processes (%s)', (kind) => {
  it(
    'old secrets stay readable, a gateway with both keys keeps sending and signing, a second run is harmless, the old key alone fails loudly',
    async () => {
      const current = await startStack(kind);
      const oldKey = randomBytes(32);
      const newKey = randomBytes(32);
      const oldOnly = { TMS_MASTER_KEY: oldKey.toString('hex') };
      const both = { TMS_MASTER_KEY: newKey.toString('hex'), TMS_MASTER_KEY_PREVIOUS: oldKey.toString('hex') };
      const newOnly = { TMS_MASTER_KEY: newKey.toString('hex') };
      store = openStore(parseConfig({ ...current.env, ...oldOnly }).database);
      const { db } = store;

      // Before: everything written under the old key; one message sent, so an access token is stored too.
      const before = await startGateway(current, oldOnly);
      const workspaceId = await seedDemoWorkspace(before);
      const hookKey = await createHookKey(before, workspaceId, current.receiver.url());
      await createHookKey(before, workspaceId, null);
      await expectSignedReport(current.receiver, await before.send(hookKey), hookKey);
      await stopGateway(before);
      // Data from before key ids: the webhook key's secret in the first format.
      const hookRow = await db.selectFrom('api_keys').select('encrypted_key').where('id', '=', hookKey.id).executeTakeFirstOrThrow();
      await db.updateTable('api_keys').set({ encrypted_key: sealInFirstFormat(decryptSecret(hookRow.encrypted_key, oldKey), oldKey) }).where('id', '=', hookKey.id).execute();
      // A run that crashed after its first batches left the app secret already under the new key.
      const account = await db.selectFrom('sender_accounts').select(['oa_id', 'encrypted_app_secret']).executeTakeFirstOrThrow();
      await db.updateTable('sender_accounts').set({ encrypted_app_secret: encryptSecret(decryptSecret(account.encrypted_app_secret, oldKey), newKey) }).where('oa_id', '=', account.oa_id).execute();

      // Every process now knows both keys and encrypts under the new one; it keeps sending while the command runs.
      const during = await startGateway(current, both);
      const sentDuring: string[] = [];
      let sending = true;
      const sender = (async () => {
        while (sending) {
          sentDuring.push(await during.send(hookKey));
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      await waitFor(() => sentDuring.length, (count) => count >= 3, 'sends before the rotation');
      const first = await rotateOk(current, both);
      await waitFor(() => sentDuring.length, (count) => count >= 6, 'sends after the rotation');
      sending = false;
      await sender;
      expect(first).toEqual({
        master_key_id: masterKeyId(newKey),
        previous_master_key_id: masterKeyId(oldKey),
        re_encrypted: { api_key_signing_secrets: 2, app_secrets: 0, refresh_tokens: 1, access_tokens: 1, oa_secret_keys: 1 },
        remaining: NOTHING,
        unreadable: [],
        complete: true,
      });
      for (const msgId of sentDuring) await expectSignedReport(current.receiver, msgId, hookKey);

      // Safe to repeat: nothing left to do, nothing changed.
      const snapshot = await storedSecrets(db);
      const second = await rotateOk(current, both);
      expect(second.re_encrypted).toEqual(NOTHING);
      expect(second.complete).toBe(true);
      expect(await storedSecrets(db)).toEqual(snapshot);
      for (const secret of snapshot) expect(isSealedUnder(secret.sealed, newKey), secret.where).toBe(true);
      await stopGateway(during);

      // A process given only the old key meets secrets it cannot read: it says which key it lacks.
      const refused = await rotate(current, oldOnly);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`encrypted under master key ${masterKeyId(newKey)}, which this process does not hold`);
      // A serving process with it would fail the sends it cannot prepare: it refuses to start instead.
      const stale = startTms(['start'], { ...current.env, ...oldOnly });
      const listening = await stale.waitForOutput('TMS gateway listening').then(
        () => true,
        () => false,
      );
      expect(listening, stale.stdout()).toBe(false);
      expect(await stale.exited).toEqual({ code: 78, signal: null });
      expect(stale.stderr()).toContain(`stored secrets are encrypted under master key ${masterKeyId(newKey)} (${snapshot.length} secrets), which this process does not hold`);

      // The new key alone reads everything.
      const after = await startGateway(current, newOnly);
      await expectSignedReport(current.receiver, await after.send(hookKey), hookKey);
      expect(after.tms.stdout()).not.toContain('does not hold');
      await stopGateway(after);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('rotating the master key kept in secrets.json (embedded)', () => {
  it(
    'stages a new key, re-encrypts after a restart, then forgets the old key; each step refuses to run out of order',
    async () => {
      // No TMS_MASTER_KEY: `tms start` generates one into the data directory.
      const current = await startStack('sqlite', { TMS_MASTER_KEY: '' });
      const secretsFile = join(current.env.TMS_DATA_DIR!, 'secrets.json');
      const readSecrets = (): Record<string, string> => JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;

      const first = await startGateway(current, {});
      const oldKey = Buffer.from(readSecrets().masterKey!, 'hex');
      const workspaceId = await seedDemoWorkspace(first);
      const hookKey = await createHookKey(first, workspaceId, current.receiver.url());
      await expectSignedReport(current.receiver, await first.send(hookKey), hookKey);

      // Step 1: a new key into the file, the old one beside it. The running process still has the old key only, and keeps working.
      const staged = await rotateOk(current, {}, ['--generate-key']);
      const newKey = Buffer.from(readSecrets().masterKey!, 'hex');
      expect(staged).toMatchObject({ master_key_id: masterKeyId(newKey), previous_master_key_id: masterKeyId(oldKey), secrets_file: secretsFile });
      expect(readSecrets().previousMasterKey).toBe(oldKey.toString('hex'));
      const again = await rotate(current, {}, ['--generate-key']);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('a rotation is under way');
      const early = await rotate(current, {}, ['--forget-previous']);
      expect(early.code).toBe(1);
      expect(early.stderr).toContain('still need the previous key');
      await expectSignedReport(current.receiver, await first.send(hookKey), hookKey);
      // Over HTTP, the process not yet restarted refuses to rotate to the staged key, naming both ids, rather than re-encrypt under the old one.
      const notRestarted = await first.admin('POST', '/master-key/rotation', { master_key_id: staged.master_key_id });
      expectError(notRestarted, 'master_key_mismatch', new RegExp(`master key ${masterKeyId(oldKey)} as its current key, not ${masterKeyId(newKey)}`));
      expect(staged.next_step).toContain(`{"master_key_id":"${masterKeyId(newKey)}"}`);
      // The ids of the keys a command holds, without changing anything: what the POST names.
      expect(await runAdminJson(['master-key-ids'], { ...current.env, TMS_LOG_LEVEL: 'silent' })).toEqual({ master_key_id: masterKeyId(newKey), previous_master_key_id: masterKeyId(oldKey) });

      // Step 2: restart, so the process reads both keys. Step 3: re-encrypt while it serves, here over HTTP with the staged key's id.
      await stopGateway(first);
      const second = await startGateway(current, {});
      const duringId = await second.send(hookKey);
      const rotated = expectOk(await second.admin('POST', '/master-key/rotation', { master_key_id: staged.master_key_id }), 'rotation').body;
      expect(rotated.re_encrypted).toEqual({ api_key_signing_secrets: 1, app_secrets: 1, refresh_tokens: 1, access_tokens: 1, oa_secret_keys: 1 });
      expect(rotated.complete).toBe(true);
      expect((await rotateOk(current, {})).re_encrypted).toEqual(NOTHING);
      await expectSignedReport(current.receiver, duringId, hookKey);

      // Step 4: the old key leaves the file; the next start knows only the new one, and reads everything.
      expect(await rotateOk(current, {}, ['--forget-previous'])).toEqual({ master_key_id: masterKeyId(newKey), previous_key_removed: true, secrets_file: secretsFile });
      expect(Object.keys(readSecrets()).sort()).toEqual(['masterKey']);
      expect(readSecrets().masterKey).toBe(newKey.toString('hex'));
      await stopGateway(second);
      const third = await startGateway(current, {});
      await expectSignedReport(current.receiver, await third.send(hookKey), hookKey);
      expect(third.tms.stdout()).not.toContain('does not hold');
      // Each step that changed something is in the audit log; the refused ones changed nothing and are not.
      const audited = ((await third.admin('GET', '/audit?limit=500')).body.entries as { action: string }[]).map((entry) => entry.action).filter((action) => action.startsWith('master_key.'));
      expect(audited.reverse()).toEqual(['master_key.generate', 'master_key.re_encrypt', 'master_key.re_encrypt', 'master_key.forget_previous']);
      await stopGateway(third);
    },
    TEST_TIMEOUT_MS,
  );

  it('refuses the file steps when the key comes from the environment', async () => {
    const current = await startStack('sqlite');
    const first = await startGateway(current, {});
    await stopGateway(first);
    const refused = await rotate(current, {}, ['--generate-key']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('TMS_MASTER_KEY is set in the environment');
  }, TEST_TIMEOUT_MS);
});

describe.each(STORE_KINDS)('POST /admin/v1/master-key/rotation (%s)', (kind) => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  let gateway: TestGateway;
  /** The gateway's store, where secrets are put under the keys a test needs. */
  let db: Store['db'];
  let seeded: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    // The answering process holds both keys, as every process does from step 3 of a rotation.
    gateway = await startTestGateway(kind, { env: { TMS_MASTER_KEY: newKey.toString('hex'), TMS_MASTER_KEY_PREVIOUS: oldKey.toString('hex') } });
    db = gateway.runtime.store.db;
    seeded = await seedWorkspace(gateway);
  });
  afterAll(async () => gateway?.close());

  /** The rotation over HTTP, to the key named (the answering process's current key unless told otherwise). */
  const rotation = (toKeyId = masterKeyId(newKey)) => gateway.admin('POST', '/master-key/rotation', { master_key_id: toKeyId });
  const rotationEntries = async () => ((await gateway.admin('GET', '/audit?limit=500')).body.entries as any[]).filter((entry) => entry.action === 'master_key.re_encrypt');
  /** Puts the seeded API key's secret and the sender account's app secret and refresh token under `key`, as an older process wrote them. */
  async function sealUnder(key: Buffer, firstFormatApiKey = false): Promise<void> {
    const apiKey = await db.selectFrom('api_keys').select('encrypted_key').where('id', '=', seeded.apiKeyId).executeTakeFirstOrThrow();
    const plain = decryptSecret(apiKey.encrypted_key, [newKey, oldKey]);
    await db.updateTable('api_keys').set({ encrypted_key: firstFormatApiKey ? sealInFirstFormat(plain, key) : encryptSecret(plain, key) }).where('id', '=', seeded.apiKeyId).execute();
    await db
      .updateTable('sender_accounts')
      .set({ encrypted_app_secret: encryptSecret('app-secret', key), encrypted_refresh_token: encryptSecret('refresh-token', key) })
      .where('oa_id', '=', seeded.oaId)
      .execute();
  }

  it('re-encrypts under the answering process\'s key, answers as the command line prints, is safe to repeat, and is audited with counts only', async () => {
    await sealUnder(oldKey, true);
    const rotated = await rotation();
    expectStatus(rotated, 200);
    const expected = {
      master_key_id: masterKeyId(newKey),
      previous_master_key_id: masterKeyId(oldKey),
      re_encrypted: { ...NOTHING, api_key_signing_secrets: 1, app_secrets: 1, refresh_tokens: 1 },
      remaining: NOTHING,
      unreadable: [],
      complete: true,
    };
    expect(rotated.body).toEqual(expected);
    for (const secret of await storedSecrets(db)) expect(isSealedUnder(secret.sealed, newKey), secret.where).toBe(true);
    const account = await db.selectFrom('sender_accounts').selectAll().where('oa_id', '=', seeded.oaId).executeTakeFirstOrThrow();
    expect([decryptSecret(account.encrypted_app_secret, newKey), decryptSecret(account.encrypted_refresh_token, newKey)]).toEqual(['app-secret', 'refresh-token']);

    const again = await rotation();
    expectStatus(again, 200);
    expect(again.body).toEqual({ ...expected, re_encrypted: NOTHING });

    // The command line, with the same keys, runs the same step and prints the same answer.
    await sealUnder(oldKey);
    const env = {
      ...gateway.database.env,
      TMS_ADMIN_TOKEN: gateway.config.adminToken!,
      TMS_MASTER_KEY: newKey.toString('hex'),
      TMS_MASTER_KEY_PREVIOUS: oldKey.toString('hex'),
      TMS_LOG_LEVEL: 'silent',
    };
    expect(await runAdminJson(['rotate-master-key'], env)).toEqual(expected);

    const [fromCommandLine, second, first] = await rotationEntries();
    const counts = { remaining: NOTHING, unreadable: 0, complete: true };
    expect(first).toMatchObject({ workspace_id: null, target: null, before: null, actor: { kind: 'operator', name: 'bootstrap token' }, after: { ...counts, re_encrypted: expected.re_encrypted } });
    expect(second).toMatchObject({ actor: { name: 'bootstrap token' }, after: { ...counts, re_encrypted: NOTHING } });
    expect(fromCommandLine).toMatchObject({ actor: { kind: 'operator', name: expect.stringMatching(/^tms admin \(.+@.+\)$/) }, after: { ...counts, re_encrypted: expected.re_encrypted } });
    // Counts only: neither key, nor even their ids.
    const logged = JSON.stringify([fromCommandLine, second, first]);
    for (const secret of [newKey.toString('hex'), oldKey.toString('hex'), masterKeyId(newKey), masterKeyId(oldKey), 'app-secret', seeded.apiKey]) expect(logged).not.toContain(secret);
  }, TEST_TIMEOUT_MS);

  it("refuses, naming both ids, to rotate to a key that is not the answering process's current key, and re-encrypts nothing", async () => {
    await sealUnder(oldKey);
    const before = await storedSecrets(db);
    expect(before.filter((secret) => isSealedUnder(secret.sealed, oldKey)).length).toBe(3);
    const entriesBefore = (await rotationEntries()).length;

    // Named a key it holds only as its previous one, as a process still on step 2's keys is when asked for the new key.
    const refused = await rotation(masterKeyId(oldKey));
    expectError(refused, 'master_key_mismatch');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain(`master key ${masterKeyId(newKey)} as its current key, not ${masterKeyId(oldKey)}`);
    expect(refused.body.error.message).toContain('only as its previous key');
    expect(refused.body.error.message).toContain('Nothing was re-encrypted');
    const unknownKey = masterKeyId(randomBytes(32));
    const unheld = await rotation(unknownKey);
    expectError(unheld, 'master_key_mismatch', new RegExp(`current key, not ${unknownKey}`));
    expect(unheld.body.error.message).not.toContain('only as its previous key');
    expect(await storedSecrets(db)).toEqual(before);
    expect((await rotationEntries()).length).toBe(entriesBefore);

    // The key to rotate to is required, as an id.
    expectError(await gateway.admin('POST', '/master-key/rotation'), 'invalid_request');
    expectError(await gateway.admin('POST', '/master-key/rotation', {}), 'invalid_request', /master_key_id/);
    expectError(await gateway.admin('POST', '/master-key/rotation', { master_key_id: newKey.toString('hex') }), 'invalid_request', /master_key_id/);
    expect(await storedSecrets(db)).toEqual(before);

    // Named right, it runs and completes.
    const rotated = await rotation();
    expectStatus(rotated, 200);
    expect(rotated.body).toMatchObject({ master_key_id: masterKeyId(newKey), re_encrypted: { ...NOTHING, api_key_signing_secrets: 1, app_secrets: 1, refresh_tokens: 1 }, remaining: NOTHING, complete: true });
    for (const secret of await storedSecrets(db)) expect(isSealedUnder(secret.sealed, newKey), secret.where).toBe(true);
  });

  it('names what remains in the error shape when a secret is under neither of its keys, and audits the attempt', async () => {
    await sealUnder(randomBytes(32));
    const refused = await rotation();
    expectError(refused, 'master_key_rotation_incomplete', new RegExp(`api_key_signing_secrets ${seeded.apiKeyId}: `));
    expect(refused.body.error.message).toContain('"api_key_signing_secrets":1,"app_secrets":1,"refresh_tokens":1');
    expect(refused.body.error.message).toContain(`app_secrets ${seeded.oaId}: `);
    expect(refused.body.error.message).toContain('keep the previous key');
    const [entry] = await rotationEntries();
    expect(entry.after).toEqual({ re_encrypted: NOTHING, remaining: { ...NOTHING, api_key_signing_secrets: 1, app_secrets: 1, refresh_tokens: 1 }, unreadable: 3, complete: false });
  });
});
