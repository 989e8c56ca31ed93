import { encryptSecret, sha256Hex } from '../../lib/crypto.ts';
import { createSecretToken, createSortableId } from '../../lib/ids.ts';
import { findWebhookUrlProblem } from '../../lib/webhook-url.ts';
import { findApiKey, insertApiKey, listApiKeys as selectApiKeys, updateApiKey } from '../../store/api-keys.ts';
import type { ApiKeyRow } from '../../store/schema.ts';
import { formatUtcOrNull } from '../../lib/vietnam-time.ts';
import { MAX_RATE_LIMIT_PER_SECOND } from '../../lib/limits.ts';
import { recordAudit } from '../audit.ts';
import type { Scope } from '../authentication.ts';
import type { ConsoleUserCaller, Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { applyKeyChangeToDeliveries } from '../webhook-deliveries.ts';
import { requireMasterKey, requireWholeNumber, requireWorkspace } from './preconditions.ts';

/** How every API key begins; the stored prefix is this and the first characters after it. */
export const API_KEY_PREFIX = 'tms_live_';

/** Who manages keys: the operator, for any workspace, or a console user, for their own. */
export type KeyManager = OperatorCaller | ConsoleUserCaller;

/**
 * The workspace a key verb may touch: any for the operator; for a console user only their own,
 * another workspace answering as if it did not exist.
 */
async function requireManagedWorkspace(ctx: Context<KeyManager>, workspaceId: string): Promise<void> {
  if (ctx.caller.kind === 'console_user' && ctx.caller.workspaceId !== workspaceId) throw new ApiError('workspace_not_found', `workspace ${workspaceId} not found`);
  await requireWorkspace(ctx, workspaceId);
}

/** A key the caller may manage: another workspace's key is 404, like an unknown one. */
export async function requireManagedApiKey(ctx: Context<KeyManager>, id: string): Promise<ApiKeyRow> {
  const key = await findApiKey(ctx.store.db, id);
  if (!key || (ctx.caller.kind === 'console_user' && key.workspace_id !== ctx.caller.workspaceId)) throw new ApiError('api_key_not_found', `API key ${id} not found`);
  return key;
}

/** A key's own rate limit, when it has one (null: the gateway's default). */
function checkRateLimit(rateLimit: number | null | undefined): void {
  if (rateLimit !== null && rateLimit !== undefined) requireWholeNumber(rateLimit, 'rate_limit_per_second', 1, MAX_RATE_LIMIT_PER_SECOND);
}

/** The console names the problem with its own type (its page explains the URL rules); the operator API keeps invalid_request. */
export function checkWebhookUrl(ctx: Context, url: string | null | undefined): void {
  if (url === null || url === undefined) return;
  const problem = findWebhookUrlProblem(url, ctx.parts.config.allowPrivateWebhookTargets);
  if (!problem) return;
  throw ctx.caller.kind === 'console_user' ? new ApiError('invalid_webhook_url', problem) : badRequest(problem);
}

export interface NewApiKey {
  workspaceId: string;
  name?: string;
  scopes: Scope[];
  webhook_url?: string | null;
  rate_limit_per_second?: number | null;
}

/** A key just made: its row and the secret itself, which is never available again. */
export interface CreatedApiKey {
  row: ApiKeyRow;
  secret: string;
}

/** Creates a key: the secret is answered once, stored as a SHA-256 hash and AES-256-GCM ciphertext. */
export async function createApiKey({ ctx, input }: VerbCall<KeyManager, NewApiKey>): Promise<CreatedApiKey> {
  await requireManagedWorkspace(ctx, input.workspaceId);
  checkWebhookUrl(ctx, input.webhook_url);
  checkRateLimit(input.rate_limit_per_second);
  const secret = createSecretToken(API_KEY_PREFIX);
  const now = ctx.clock();
  const row: ApiKeyRow = {
    id: createSortableId('key', now),
    workspace_id: input.workspaceId,
    name: input.name ?? 'default',
    key_hash: sha256Hex(secret),
    key_prefix: secret.slice(0, API_KEY_PREFIX.length + 6),
    encrypted_key: encryptSecret(secret, requireMasterKey(ctx)),
    scopes: JSON.stringify([...new Set(input.scopes)]),
    webhook_url: input.webhook_url ?? null,
    rate_limit_per_second: input.rate_limit_per_second ?? null,
    revoked_at: null,
    created_at: now,
    last_used_at: null,
  };
  await insertApiKey(ctx.store.db, row);
  await recordAudit(ctx, {
    action: 'api_key.create',
    workspaceId: row.workspace_id,
    target: row.id,
    before: null,
    after: { name: row.name, key_prefix: row.key_prefix, scopes: JSON.parse(row.scopes) as string[], webhook_url: row.webhook_url, rate_limit_per_second: row.rate_limit_per_second },
  });
  return { row, secret };
}

/** A workspace's keys, revoked ones included. */
export async function listApiKeys({ ctx, input }: VerbCall<KeyManager, { workspaceId: string }>): Promise<ApiKeyRow[]> {
  await requireManagedWorkspace(ctx, input.workspaceId);
  return selectApiKeys(ctx.store.db, input.workspaceId);
}

export interface ApiKeyChanges {
  name?: string;
  revoke?: boolean;
  webhook_url?: string | null;
  rate_limit_per_second?: number | null;
}

/**
 * Revokes a key or changes its name, webhook URL or rate limit. The change takes effect at once in
 * this process, and the key's pending delivery reports follow it (cancelled or readdressed).
 */
export async function changeApiKey({ ctx, input }: VerbCall<KeyManager, { id: string } & ApiKeyChanges>): Promise<ApiKeyRow> {
  const { id } = input;
  const existing = await requireManagedApiKey(ctx, id);
  checkWebhookUrl(ctx, input.webhook_url);
  checkRateLimit(input.rate_limit_per_second);
  const update: Partial<Pick<ApiKeyRow, 'name' | 'revoked_at' | 'webhook_url' | 'rate_limit_per_second'>> = {};
  if (input.name !== undefined) update.name = input.name;
  if (input.revoke) update.revoked_at = existing.revoked_at ?? ctx.clock();
  if (input.webhook_url !== undefined) update.webhook_url = input.webhook_url;
  if (input.rate_limit_per_second !== undefined) update.rate_limit_per_second = input.rate_limit_per_second;
  // An empty change (PATCH {}) has nothing to SET: answer with the key as it is.
  if (Object.keys(update).length === 0) return existing;
  const row = await updateApiKey(ctx.store.db, id, update);
  if (!row) throw new ApiError('api_key_not_found', `API key ${id} not found`);
  ctx.parts.apiKeys.forgetAll();
  await applyKeyChangeToDeliveries({ ctx, input: { before: existing, after: row } });
  await auditKeyChange(ctx, existing, row);
  return row;
}

const AUDITED_KEY_FIELDS = ['name', 'webhook_url', 'rate_limit_per_second', 'revoked_at'] as const;

/** One activity entry per change, named by what matters most in it; nothing when nothing changed. */
async function auditKeyChange(ctx: Context<KeyManager>, before: ApiKeyRow, after: ApiKeyRow): Promise<void> {
  const fields = AUDITED_KEY_FIELDS.filter((field) => before[field] !== after[field]);
  if (fields.length === 0) return;
  const action = fields.includes('revoked_at')
    ? 'api_key.revoke'
    : fields.includes('webhook_url')
      ? 'api_key.webhook_change'
      : fields.includes('rate_limit_per_second')
        ? 'api_key.rate_limit_change'
        : 'api_key.rename';
  const valuesOf = (row: ApiKeyRow) => Object.fromEntries(fields.map((field) => [field, field === 'revoked_at' ? formatUtcOrNull(row.revoked_at) : row[field]]));
  await recordAudit(ctx, { action, workspaceId: after.workspace_id, target: after.id, before: valuesOf(before), after: valuesOf(after) });
}
