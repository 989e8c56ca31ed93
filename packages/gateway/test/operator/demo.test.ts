/** The demo workspace of the quick start: made once, completed after a crash, never forced on an operator. */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { changeApiKey, listApiKeys } from '../../src/services/admin/api-keys.ts';
import { listSenderAccounts } from '../../src/services/admin/sender-accounts.ts';
import { listWorkspaceTemplates } from '../../src/services/admin/templates.ts';
import { readWallet } from '../../src/services/admin/wallets.ts';
import { createWorkspace } from '../../src/services/admin/workspaces.ts';
import type { Context, OperatorCaller } from '../../src/services/context.ts';
import { DEMO_BALANCE_VND, ensureDemoWorkspace } from '../../src/services/demo.ts';
import { createTestDatabase, gatewayEnvironment, type TestDatabase } from '../harness.ts';

describe('ensureDemoWorkspace', () => {
  let runtime: Runtime | undefined;
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await runtime?.close();
    await database?.drop();
  });

  /** The operator's context on a new embedded store. */
  async function open(): Promise<Context<OperatorCaller>> {
    database = await createTestDatabase('sqlite');
    runtime = await createRuntime(parseConfig(gatewayEnvironment(database)), { log: pino({ level: 'silent' }) });
    return runtime.contextFor({ kind: 'operator' });
  }

  it('completes a demo whose seeding was cut short, without paying its balance twice', async () => {
    const ctx = await open();
    const partial = await createWorkspace({ ctx, input: { name: 'Demo workspace', is_demo: true } });
    const workspace = { workspaceId: partial.id };
    const demo = await ensureDemoWorkspace({ ctx, input: {} });
    expect(demo).toMatchObject({ workspaceId: partial.id, created: true, apiKey: expect.stringMatching(/^tms_live_/), apiKeyId: expect.stringMatching(/^key_/) });
    expect(await listWorkspaceTemplates({ ctx, input: workspace })).toHaveLength(3);
    expect(await listSenderAccounts({ ctx, input: workspace })).toHaveLength(1);
    expect((await readWallet({ ctx, input: workspace })).balance).toBe(DEMO_BALANCE_VND);
    const again = await ensureDemoWorkspace({ ctx, input: {} });
    expect(again).toEqual({ workspaceId: partial.id, apiKeyId: demo!.apiKeyId, apiKey: demo!.apiKey, created: false });
    expect((await readWallet({ ctx, input: workspace })).balance).toBe(DEMO_BALANCE_VND);
    expect((await listApiKeys({ ctx, input: workspace })).map((key) => key.id)).toEqual([demo!.apiKeyId]);
  });

  it('leaves a demo without a key when the operator revoked it', async () => {
    const ctx = await open();
    const demo = await ensureDemoWorkspace({ ctx, input: {} });
    const [key] = await listApiKeys({ ctx, input: { workspaceId: demo!.workspaceId } });
    await changeApiKey({ ctx, input: { id: key!.id, revoke: true } });
    expect(await ensureDemoWorkspace({ ctx, input: {} })).toBeNull();
    expect(await listApiKeys({ ctx, input: { workspaceId: demo!.workspaceId } })).toHaveLength(1);
  });
});
