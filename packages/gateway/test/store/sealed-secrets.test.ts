/**
 * The re-encryption walk of a master key rotation on the real store and runtime: batches smaller
 * than the data, rows changed between the read and the write, and secrets no key opens.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { decryptSecret, encryptSecret, isSealedUnder, sealedPrefix } from '../../src/lib/crypto.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { rotateMasterKey } from '../../src/services/admin/master-key-rotation.ts';
import { findSecretsNotSealedWith, replaceSealedSecrets } from '../../src/store/sealed-secrets.ts';
import { gatewayEnvironment, seedWorkspace, startTestGateway, STORE_KINDS, type TestGateway } from '../harness.ts';

const KEYS = 7;

describe.each(STORE_KINDS)('re-encrypting stored secrets (%s)', (kind) => {
  let gateway: TestGateway | undefined;
  let rotator: Runtime | undefined;

  afterEach(async () => {
    await rotator?.close();
    await gateway?.close();
    rotator = undefined;
    gateway = undefined;
  });

  /** A gateway under the old key with KEYS API keys, and a runtime on the same store holding the new key and the old. */
  async function setUp(): Promise<{ oldKey: Buffer; newKey: Buffer; runtime: Runtime; apiKeys: Map<string, string> }> {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    gateway = await startTestGateway(kind, { env: { TMS_MASTER_KEY: oldKey.toString('hex') } });
    const seeded = await seedWorkspace(gateway);
    const apiKeys = new Map([[seeded.apiKeyId, seeded.apiKey]]);
    for (let index = 1; index < KEYS; index += 1) {
      const body = (await gateway.admin('POST', `/workspaces/${seeded.workspaceId}/api-keys`, { scopes: ['messages:send'] })).body;
      apiKeys.set(body.id as string, body.key as string);
    }
    const config = parseConfig(gatewayEnvironment(gateway.database, { TMS_MASTER_KEY: newKey.toString('hex'), TMS_MASTER_KEY_PREVIOUS: oldKey.toString('hex') }));
    rotator = await createRuntime(config, { log: pino({ level: 'silent' }) });
    return { oldKey, newKey, runtime: rotator, apiKeys };
  }

  it('walks every secret in batches smaller than the data, and a second walk finds nothing', async () => {
    const { newKey, runtime, apiKeys } = await setUp();
    const ctx = runtime.contextFor({ kind: 'operator' });
    const first = await rotateMasterKey({ ctx, input: { batchSize: 2 } });
    expect(first.re_encrypted).toEqual({ api_key_signing_secrets: KEYS, app_secrets: 1, refresh_tokens: 1, access_tokens: 0, oa_secret_keys: 0 });
    expect(first.complete).toBe(true);
    for (const row of await runtime.store.db.selectFrom('api_keys').select(['id', 'encrypted_key']).execute()) {
      expect(isSealedUnder(row.encrypted_key, newKey)).toBe(true);
      expect(decryptSecret(row.encrypted_key, newKey)).toBe(apiKeys.get(row.id));
    }
    const second = await rotateMasterKey({ ctx, input: { batchSize: 2 } });
    expect(Object.values(second.re_encrypted)).toEqual([0, 0, 0, 0, 0]);
  });

  it('never overwrites a secret that changed after it was read', async () => {
    const { oldKey, newKey, runtime } = await setUp();
    const [read] = await findSecretsNotSealedWith(runtime.store.db, 'refresh_tokens', { prefix: sealedPrefix(newKey), afterId: null, limit: 10 });
    // A token refresh stores a new pair meanwhile.
    const refreshed = encryptSecret('refreshed-token', oldKey);
    await runtime.store.db.updateTable('sender_accounts').set({ encrypted_refresh_token: refreshed }).where('oa_id', '=', read!.id).execute();
    const written = await replaceSealedSecrets(runtime.store, 'refresh_tokens', [{ ...read!, resealed: encryptSecret(decryptSecret(read!.sealed, oldKey), newKey) }]);
    expect(written).toBe(0);
    const row = await runtime.store.db.selectFrom('sender_accounts').select('encrypted_refresh_token').where('oa_id', '=', read!.id).executeTakeFirstOrThrow();
    expect(row.encrypted_refresh_token).toBe(refreshed);
    // The next run takes the new value over, under the new key.
    await rotateMasterKey({ ctx: runtime.contextFor({ kind: 'operator' }), input: {} });
    const after = await runtime.store.db.selectFrom('sender_accounts').select('encrypted_refresh_token').where('oa_id', '=', read!.id).executeTakeFirstOrThrow();
    expect(decryptSecret(after.encrypted_refresh_token, newKey)).toBe('refreshed-token');
  });

  it('reports secrets no key opens, leaves them as they are, and rotates the rest', async () => {
    const { newKey, runtime } = await setUp();
    const lost = encryptSecret('sealed under a lost key', randomBytes(32));
    const [victim] = await runtime.store.db.selectFrom('api_keys').select('id').orderBy('id').limit(1).execute();
    await runtime.store.db.updateTable('api_keys').set({ encrypted_key: lost }).where('id', '=', victim!.id).execute();
    const result = await rotateMasterKey({ ctx: runtime.contextFor({ kind: 'operator' }), input: { batchSize: 3 } });
    expect(result.complete).toBe(false);
    expect(result.remaining.api_key_signing_secrets).toBe(1);
    expect(result.re_encrypted.api_key_signing_secrets).toBe(KEYS - 1);
    expect(result.unreadable).toEqual([{ kind: 'api_key_signing_secrets', id: victim!.id, problem: expect.stringContaining('which this process does not hold') }]);
    const row = await runtime.store.db.selectFrom('api_keys').select('encrypted_key').where('id', '=', victim!.id).executeTakeFirstOrThrow();
    expect(row.encrypted_key).toBe(lost);
    expect(isSealedUnder(lost, newKey)).toBe(false);
  });
});
