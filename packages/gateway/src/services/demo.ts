import { createHmac } from 'node:crypto';
import { masterKeyRing } from '../config/master-key.ts';
import { decryptSecret } from '../lib/crypto.ts';
import { createSortableId } from '../lib/ids.ts';
import { hashPassword, verifyPassword } from '../lib/passwords.ts';
import { listApiKeys } from '../store/api-keys.ts';
import { findConsoleUserByEmail, insertConsoleUser } from '../store/console-users.ts';
import { findDemoWorkspace, listLedger, listWorkspaces } from '../store/workspaces.ts';
import { createApiKey } from './admin/api-keys.ts';
import { requireMasterKey } from './admin/preconditions.ts';
import { connectSenderAccount } from './admin/sender-accounts.ts';
import { registerTemplate, type RegisterTemplateInput } from './admin/templates.ts';
import { topUp } from './admin/wallets.ts';
import { createWorkspace } from './admin/workspaces.ts';
import type { Context, OperatorCaller, VerbCall } from './context.ts';

/**
 * The demo workspace made on a new embedded data directory, so the README's curl lines work.
 * Its sender account and templates match the simulator's demo seed (packages/zns-sim).
 */
export const DEMO_SENDER_ACCOUNT = {
  oa_id: '4318269720189301001',
  name: 'TMS Demo Shop',
  default_mode: 'plain' as const,
  daily_quota: 5000,
  app_id: '2074138120372622001',
  app_secret: 'demo-app-secret-change-me',
  refresh_token: 'demo-refresh-token-0001',
  oa_secret_key: 'demo-oa-secret-key-change-me',
};

export const DEMO_TEMPLATES: Omit<RegisterTemplateInput, 'oa_id'>[] = [
  {
    template_id: '250001',
    name: 'Order confirmation',
    status: 'ENABLE',
    template_type: 1,
    preview_url: 'https://account.zalo.cloud/znspreview/demo-order',
    price: 300,
    params: [
      { name: 'customer_name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
      { name: 'order_code', type: 'STRING', required: true, max_length: 30, min_length: 1 },
      { name: 'amount', type: 'STRING', required: true, max_length: 20, min_length: 1 },
    ],
  },
  {
    template_id: '250002',
    name: 'One-time password',
    status: 'ENABLE',
    template_type: 2,
    preview_url: 'https://account.zalo.cloud/znspreview/demo-otp',
    price: 250,
    params: [{ name: 'otp', type: 'STRING', required: true, max_length: 10, min_length: 4 }],
  },
  {
    template_id: '250003',
    name: 'Appointment reminder',
    status: 'ENABLE',
    template_type: 1,
    preview_url: 'https://account.zalo.cloud/znspreview/demo-appointment',
    price: 300,
    params: [
      { name: 'customer_name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
      { name: 'appointment_time', type: 'STRING', required: true, max_length: 20, min_length: 1 },
      { name: 'location', type: 'STRING', required: false, max_length: 200, min_length: 0 },
    ],
  },
];

export const DEMO_BALANCE_VND = 1_000_000;

export interface DemoCredentials {
  workspaceId: string;
  /** The key's id (key_…), for the operator API: PATCH /admin/v1/api-keys/{id} sets its webhook URL. */
  apiKeyId: string;
  apiKey: string;
  created: boolean;
}

/**
 * Creates the demo workspace once, on a store with no workspaces; later calls return its
 * (still unrevoked) key. A seeding cut short by a crash (a demo workspace that never got a key)
 * is completed on the next start; a demo whose keys the operator revoked stays without one.
 */
export async function ensureDemoWorkspace({ ctx }: VerbCall<OperatorCaller, Record<string, never>>): Promise<DemoCredentials | null> {
  const existing = await findDemoWorkspace(ctx.store.db);
  const masterKeys = masterKeyRing(ctx.parts.config);
  if (existing) {
    const keys = await listApiKeys(ctx.store.db, existing.id);
    const key = keys.find((row) => row.revoked_at === null);
    if (key && masterKeys) {
      return { workspaceId: existing.id, apiKeyId: key.id, apiKey: decryptSecret(key.encrypted_key, masterKeys), created: false };
    }
    return keys.length === 0 ? completeDemoWorkspace(ctx, existing.id) : null;
  }
  // Only a new data directory gets a demo: never one where the operator already made workspaces.
  if ((await listWorkspaces(ctx.store.db, { limit: 1, offset: 0 })).length > 0) return null;
  const workspace = await createWorkspace({ ctx, input: { name: 'Demo workspace', is_demo: true } });
  return completeDemoWorkspace(ctx, workspace.id);
}

/** Every step is safe to repeat: the balance is added once, the rest are upserts, the key comes last. */
async function completeDemoWorkspace(ctx: Context<OperatorCaller>, workspaceId: string): Promise<DemoCredentials> {
  if ((await listLedger(ctx.store.db, workspaceId, { limit: 1, offset: 0 })).length === 0) {
    await topUp({ ctx, input: { workspaceId, amount: DEMO_BALANCE_VND, note: 'demo balance' } });
  }
  // Unchecked: the seed's refresh token is the simulator's, and a seeding completed after a crash
  // would otherwise spend it twice (the first spend rotated it). The first send refreshes it.
  await connectSenderAccount({ ctx, input: { ...DEMO_SENDER_ACCOUNT, workspaceId, verify: false } });
  for (const template of DEMO_TEMPLATES) await registerTemplate({ ctx, input: { ...template, oa_id: DEMO_SENDER_ACCOUNT.oa_id, workspaceId, verify: false } });
  const key = await createApiKey({ ctx, input: { workspaceId, name: 'demo', scopes: ['messages:send', 'messages:read', 'templates:read'] } });
  return { workspaceId, apiKeyId: key.row.id, apiKey: key.secret, created: true };
}

export const DEMO_OWNER_EMAIL = 'owner@demo.tms.local';

/** The demo owner's sign-in, for the start banner; the password is null when it is no longer the generated one. */
export interface DemoOwner {
  email: string;
  password: string | null;
}

/**
 * The demo owner's password. It is derived from the master key rather than stored: like the demo
 * key (kept encrypted with that key), only whoever holds the master key can recover it, and every
 * start of the same data directory prints the same one.
 */
function demoOwnerPassword(masterKey: Buffer, workspaceId: string): string {
  return createHmac('sha256', masterKey).update(`tms demo console owner ${workspaceId}`).digest('base64url').slice(0, 20);
}

/**
 * Gives the demo workspace a console owner who can sign in at once (no invitation), once; later
 * calls find it and answer the same sign-in. An address taken by another workspace is left alone.
 */
export async function ensureDemoOwner({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string }>): Promise<DemoOwner | null> {
  const password = demoOwnerPassword(requireMasterKey(ctx), input.workspaceId);
  const existing = await findConsoleUserByEmail(ctx.store.db, DEMO_OWNER_EMAIL);
  if (existing) {
    if (existing.workspace_id !== input.workspaceId) return null;
    const unchanged = existing.password_hash !== null && (await verifyPassword(password, existing.password_hash));
    return { email: DEMO_OWNER_EMAIL, password: unchanged ? password : null };
  }
  const now = ctx.clock();
  await insertConsoleUser(ctx.store.db, {
    id: createSortableId('usr', now),
    workspace_id: input.workspaceId,
    email: DEMO_OWNER_EMAIL,
    role: 'owner',
    password_hash: await hashPassword(password),
    invitation_hash: null,
    invitation_expires_at: null,
    last_sign_in_at: null,
    created_at: now,
    updated_at: now,
  });
  return { email: DEMO_OWNER_EMAIL, password };
}
