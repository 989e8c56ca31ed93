/**
 * A process whose master keys cannot read the store refuses to start, with real `tms` processes on
 * both stores: after a rotation, `tms worker`, `tms api` and `tms start` given only the old key
 * exit 78 naming TMS_MASTER_KEY_PREVIOUS instead of starting and failing customers' messages; so
 * does an unrelated key, also on a store from before key ids. The new key (with or without the
 * previous one) starts, and so do both keys while the store holds secrets under each; a key the
 * operator declared lost (TMS_MASTER_KEY_LOST_IDS) does not stop a start. `tms admin` only warns:
 * it is how an operator looks into and repairs such a store.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import type { RunningSimulator } from '@tms/zns-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { decryptSecret, isSealedUnder, masterKeyId } from '../../src/lib/crypto.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { createTestDatabase, freePort, gatewayEnvironment, httpRequest, STORE_KINDS, type TestDatabase, type TestResponse } from '../harness.ts';
import { createHookKey, seedDemoWorkspace, startQuietSimulator, type Admin } from '../webhooks/support.ts';
import { killAllTms, runTms, startTms, type CliResult } from './processes.ts';

const TEST_TIMEOUT_MS = 300_000;
const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
const STARTED = '"msg":"tms started"';
/** EX_CONFIG: how `tms` exits on any configuration problem. */
const EX_CONFIG = 78;

interface Stack {
  database: TestDatabase;
  simulator: RunningSimulator;
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
    await stack.database.drop();
  }
  stack = undefined;
});

async function startStack(kind: 'sqlite' | 'postgres'): Promise<Stack> {
  const database = await createTestDatabase(kind);
  const simulator = await startQuietSimulator();
  const env = gatewayEnvironment(database, {
    ZNS_OAUTH_URL: simulator.url,
    ZNS_API_URL: simulator.url,
    TMS_ADMIN_TOKEN: ADMIN_TOKEN,
    TMS_LOG_LEVEL: 'info',
  });
  stack = { database, simulator, env };
  return stack;
}

/** Runs a `tms start` with these keys while `work` writes secrets through its operator API. */
async function withGateway(current: Stack, keys: Record<string, string>, work: (admin: Admin) => Promise<void>): Promise<void> {
  const port = await freePort();
  const tms = startTms(['start'], { ...current.env, ...keys, PORT: String(port) });
  await tms.waitForOutput(STARTED);
  const url = `http://127.0.0.1:${port}`;
  await work({ admin: (method: string, path: string, body?: unknown): Promise<TestResponse> => httpRequest(url, method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body }) });
  expect(await tms.stop()).toEqual({ code: 0, signal: null });
}

interface Outcome {
  readonly started: boolean;
  readonly code: number | null;
  readonly output: string;
}

/** Starts `tms <command>` and reports whether it got as far as serving (then stops it) or exited by itself. */
async function launch(current: Stack, command: 'start' | 'api' | 'worker', keys: Record<string, string>): Promise<Outcome> {
  const tms = startTms([command], { ...current.env, ...keys, PORT: String(await freePort()) });
  const started = await tms.waitForOutput(STARTED).then(
    () => true,
    () => false,
  );
  const { code } = started ? await tms.stop() : await tms.exited;
  return { started, code, output: `${tms.stdout()}${tms.stderr()}` };
}

async function expectStarts(current: Stack, command: 'start' | 'api' | 'worker', keys: Record<string, string>): Promise<void> {
  const outcome = await launch(current, command, keys);
  expect(outcome.started, `tms ${command} should start:\n${outcome.output}`).toBe(true);
  expect(outcome.code, outcome.output).toBe(0);
}

/** Exit 78 before serving, naming the key id it lacks and what to set. */
async function expectRefused(current: Stack, command: 'start' | 'api' | 'worker', keys: Record<string, string>, missingKeyId: string): Promise<void> {
  const outcome = await launch(current, command, keys);
  expect(outcome.started, `tms ${command} should refuse to start:\n${outcome.output}`).toBe(false);
  expect(outcome.code, outcome.output).toBe(EX_CONFIG);
  expect(outcome.output).toContain(`Invalid configuration: TMS_MASTER_KEY cannot read the store: stored secrets are encrypted under master key ${missingKeyId}`);
  expect(outcome.output).toContain('TMS_MASTER_KEY_PREVIOUS');
  expect(outcome.output).not.toContain(STARTED);
}

function admin(current: Stack, args: string[], keys: Record<string, string>): Promise<CliResult> {
  return runTms(['admin', ...args, '--json'], { ...current.env, TMS_LOG_LEVEL: 'silent', ...keys });
}

/** A secret as the first format stored it: base64(iv | tag | ciphertext), no key id. */
function sealInFirstFormat(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

describe.each(STORE_KINDS)('starting with master keys that cannot read the store (%s)', (kind) => {
  it(
    'after a rotation the old key alone and an unrelated key exit 78; the new key starts, with or without the previous one',
    async () => {
      const current = await startStack(kind);
      const oldKey = randomBytes(32);
      const newKey = randomBytes(32);
      const oldOnly = { TMS_MASTER_KEY: oldKey.toString('hex') };
      const both = { TMS_MASTER_KEY: newKey.toString('hex'), TMS_MASTER_KEY_PREVIOUS: oldKey.toString('hex') };
      const newOnly = { TMS_MASTER_KEY: newKey.toString('hex') };
      const unrelated = { TMS_MASTER_KEY: randomBytes(32).toString('hex') };
      store = openStore(parseConfig({ ...current.env, ...oldOnly }).database);

      // Before the rotation: a sender account's secrets and an API key, under the old key.
      let workspaceId = '';
      await withGateway(current, oldOnly, async (gateway) => {
        workspaceId = await seedDemoWorkspace(gateway);
        await createHookKey(gateway, workspaceId, null);
      });

      // Step 3 of a rotation: the new key current, the old one previous. A key created now is under
      // the new key, beside the old key's secrets: both keys read that store, the old one alone does not.
      await withGateway(current, both, async (gateway) => {
        await createHookKey(gateway, workspaceId, null);
      });
      const keys = await store.db.selectFrom('api_keys').select('encrypted_key').execute();
      expect(keys.map((key) => isSealedUnder(key.encrypted_key, newKey)).sort()).toEqual([false, true]);
      await expectStarts(current, 'worker', both);
      await expectRefused(current, 'worker', oldOnly, masterKeyId(newKey));
      // rotate-master-key works on that mixed store, with both keys.
      const rotated = await admin(current, ['rotate-master-key'], both);
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(JSON.parse(rotated.stdout)).toMatchObject({ complete: true });
      expect(rotated.stderr).toBe('');

      // After the rotation: every long-running command refuses the old key alone, and an unrelated key.
      await expectRefused(current, 'worker', oldOnly, masterKeyId(newKey));
      await expectRefused(current, 'api', oldOnly, masterKeyId(newKey));
      await expectRefused(current, 'start', oldOnly, masterKeyId(newKey));
      await expectRefused(current, 'worker', unrelated, masterKeyId(newKey));
      // A key the operator declared lost for good is no reason to refuse: the new key's start after a loss.
      await expectStarts(current, 'worker', { ...unrelated, TMS_MASTER_KEY_LOST_IDS: masterKeyId(newKey) });
      // Any process holding the new key starts: step 2's order (old current, new previous) too.
      await expectStarts(current, 'worker', { TMS_MASTER_KEY: oldKey.toString('hex'), TMS_MASTER_KEY_PREVIOUS: newKey.toString('hex') });
      await expectStarts(current, 'api', both);
      await expectStarts(current, 'worker', newOnly);

      // `tms admin` with the old key alone still runs, and warns.
      const listed = await admin(current, ['workspaces', 'list'], oldOnly);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toContain(`warning: TMS_MASTER_KEY cannot read the store: stored secrets are encrypted under master key ${masterKeyId(newKey)}`);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'secrets from before key ids: an unrelated key exits 78, the key they are under starts',
    async () => {
      const current = await startStack(kind);
      const key = randomBytes(32);
      const keyOnly = { TMS_MASTER_KEY: key.toString('hex') };
      const unrelated = { TMS_MASTER_KEY: randomBytes(32).toString('hex') };
      store = openStore(parseConfig({ ...current.env, ...keyOnly }).database);
      await withGateway(current, keyOnly, async (gateway) => {
        const workspaceId = await seedDemoWorkspace(gateway);
        await createHookKey(gateway, workspaceId, null);
      });
      // Every secret rewritten in the first format, which names no key.
      for (const row of await store.db.selectFrom('api_keys').select(['id', 'encrypted_key']).execute()) {
        await store.db.updateTable('api_keys').set({ encrypted_key: sealInFirstFormat(decryptSecret(row.encrypted_key, key), key) }).where('id', '=', row.id).execute();
      }
      for (const row of await store.db.selectFrom('sender_accounts').select(['oa_id', 'encrypted_app_secret', 'encrypted_refresh_token']).execute()) {
        await store.db
          .updateTable('sender_accounts')
          .set({
            encrypted_app_secret: sealInFirstFormat(decryptSecret(row.encrypted_app_secret, key), key),
            encrypted_refresh_token: sealInFirstFormat(decryptSecret(row.encrypted_refresh_token, key), key),
          })
          .where('oa_id', '=', row.oa_id)
          .execute();
      }

      const refused = await launch(current, 'worker', unrelated);
      expect(refused.started, refused.output).toBe(false);
      expect(refused.code, refused.output).toBe(EX_CONFIG);
      expect(refused.output).toContain('stored secrets from before key ids (api_key_signing_secrets, app_secrets, refresh_tokens) open under none of its keys');
      expect(refused.output).toContain('TMS_MASTER_KEY_PREVIOUS');
      expect(refused.output).toContain('their id for TMS_MASTER_KEY_LOST_IDS: legacy');
      await expectStarts(current, 'worker', keyOnly);
      // The key lost for good: its secrets of both formats declared lost (the access tokens stayed in the keyed format).
      await expectStarts(current, 'worker', { ...unrelated, TMS_MASTER_KEY_LOST_IDS: `legacy,${masterKeyId(key)}` });
    },
    TEST_TIMEOUT_MS,
  );
});
