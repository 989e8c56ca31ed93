/** The demo workspace of the quick start: made once, completed after a crash, never forced on an operator. */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { changeApiKey, createWorkspace, listApiKeys, listSenderAccounts, listWorkspaceTemplates, readWallet } from '../../src/services/admin.ts';
import { DEMO_BALANCE_VND, ensureDemoWorkspace } from '../../src/services/demo.ts';
import { createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

describe('ensureDemoWorkspace', () => {
  let runtime: Runtime | undefined;
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await runtime?.close();
    await database?.drop();
  });

  async function open(): Promise<Runtime> {
    database = await createTestDatabase('sqlite');
    runtime = await createRuntime(parseConfig(gatewayEnvironment(database)), { log: pino({ level: 'silent' }) });
    return runtime;
  }

  it('completes a demo whose seeding was cut short, without paying its balance twice', async () => {
    const { admin } = await open();
    const partial = await createWorkspace(admin, { name: 'Demo workspace', is_demo: true });
    const demo = await ensureDemoWorkspace(admin);
    expect(demo).toMatchObject({ workspaceId: partial.id, created: true, apiKey: expect.stringMatching(/^tms_live_/), apiKeyId: expect.stringMatching(/^key_/) });
    expect((await listWorkspaceTemplates(admin, partial.id)).count).toBe(3);
    expect((await listSenderAccounts(admin, partial.id)).count).toBe(1);
    expect((await readWallet(admin, partial.id, {})).balance).toBe(DEMO_BALANCE_VND);
    const again = await ensureDemoWorkspace(admin);
    expect(again).toEqual({ workspaceId: partial.id, apiKeyId: demo!.apiKeyId, apiKey: demo!.apiKey, created: false });
    expect((await readWallet(admin, partial.id, {})).balance).toBe(DEMO_BALANCE_VND);
    expect((await listApiKeys(admin, partial.id)).api_keys.map((key) => key.id)).toEqual([demo!.apiKeyId]);
  });

  it('leaves a demo without a key when the operator revoked it', async () => {
    const { admin } = await open();
    const demo = await ensureDemoWorkspace(admin);
    const [key] = (await listApiKeys(admin, demo!.workspaceId)).api_keys;
    await changeApiKey(admin, key!.id, { revoke: true });
    expect(await ensureDemoWorkspace(admin)).toBeNull();
    expect((await listApiKeys(admin, demo!.workspaceId)).count).toBe(1);
  });
});
