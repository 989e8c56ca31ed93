/**
 * The start-up check of the master keys against the store (findMasterKeyMismatch) on the real
 * store: which stored secrets name a key the process does not hold, counted per key id.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/config.ts';
import { encryptSecret, masterKeyId } from '../../src/lib/crypto.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { findMasterKeyMismatch, type MasterKeyMismatch } from '../../src/services/master-keys.ts';
import { gatewayEnvironment, seedWorkspace, startTestGateway, STORE_KINDS, type TestGateway } from '../harness.ts';

describe.each(STORE_KINDS)('checking the master keys against the store (%s)', (kind) => {
  let gateway: TestGateway | undefined;
  const runtimes: Runtime[] = [];

  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    await gateway?.close();
    gateway = undefined;
  });

  /** The check as a process with these keys (current first; none at all with []) would run it. */
  async function checkWith(keys: Buffer[]): Promise<MasterKeyMismatch | null> {
    const env = gatewayEnvironment(gateway!.database, {
      TMS_MASTER_KEY: (keys[0] ?? randomBytes(32)).toString('hex'),
      ...(keys[1] ? { TMS_MASTER_KEY_PREVIOUS: keys[1].toString('hex') } : {}),
    });
    const config: Config = keys.length === 0 ? { ...parseConfig(env), masterKey: null } : parseConfig(env);
    const runtime = await createRuntime(config, { log: pino({ level: 'silent' }) });
    runtimes.push(runtime);
    return findMasterKeyMismatch(runtime.contextFor({ kind: 'operator' }));
  }

  it('passes an empty store, and any store without a master key', async () => {
    const oldKey = randomBytes(32);
    gateway = await startTestGateway(kind, { env: { TMS_MASTER_KEY: oldKey.toString('hex') } });
    expect(await checkWith([randomBytes(32)])).toBeNull();
    await seedWorkspace(gateway);
    expect(await checkWith([])).toBeNull();
  });

  it('counts per key id the secrets under neither key, and passes a store under the current and previous keys', async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    gateway = await startTestGateway(kind, { env: { TMS_MASTER_KEY: oldKey.toString('hex') } });
    const seeded = await seedWorkspace(gateway);
    expect(await checkWith([oldKey])).toBeNull();

    // A secret under the new key beside the old key's: both keys read the store, in either order.
    const db = gateway.runtime.store.db;
    await db.updateTable('api_keys').set({ encrypted_key: encryptSecret('signing secret', newKey) }).where('id', '=', seeded.apiKeyId).execute();
    expect(await checkWith([newKey, oldKey])).toBeNull();
    expect(await checkWith([oldKey, newKey])).toBeNull();

    const oldOnly = await checkWith([oldKey]);
    expect(oldOnly).toMatchObject({ missingKeyIds: { [masterKeyId(newKey)]: 1 }, unreadableFirstFormat: [], heldKeyIds: [masterKeyId(oldKey)] });
    expect(oldOnly!.problem).toContain(`encrypted under master key ${masterKeyId(newKey)} (1 secret), which this process does not hold`);
    expect(oldOnly!.problem).toContain('TMS_MASTER_KEY_PREVIOUS');

    // The app secret and the refresh token are still under the old key.
    const unrelated = randomBytes(32);
    expect(await checkWith([unrelated])).toMatchObject({ missingKeyIds: { [masterKeyId(oldKey)]: 2, [masterKeyId(newKey)]: 1 }, heldKeyIds: [masterKeyId(unrelated)] });
  });
});
