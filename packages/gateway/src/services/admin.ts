import { createSecretToken, createSortableId } from '../lib/ids.ts';
import { encryptSecret, sha256Hex } from '../lib/crypto.ts';
import { MAX_COUNT, MAX_INT32, MAX_PRICE_VND, MAX_WALLET_BALANCE_VND, wholeNumberProblem } from '../lib/limits.ts';
import { formatUtc, formatUtcOrNull } from '../lib/vietnam-time.ts';
import { findWebhookUrlProblem } from '../lib/webhook-url.ts';
import { headerValueProblem } from '../platform/header-value.ts';
import { findApiKey, insertApiKey, listApiKeys as selectApiKeys, updateApiKey } from '../store/api-keys.ts';
import type { ApiKeyRow, LedgerRow, SenderAccountRow, TemplateRow, TemplateStatus, WorkspaceRow } from '../store/schema.ts';
import { findSenderAccount, listSenderAccounts as selectSenderAccounts, upsertSenderAccount } from '../store/sender-accounts.ts';
import { listTemplates as selectTemplates, upsertTemplate } from '../store/templates.ts';
import { findWorkspace, insertWorkspace, listLedger, listWorkspaces as selectWorkspaces, topUpWallet, updateWorkspace } from '../store/workspaces.ts';
import type { Scope } from './authentication.ts';
import { presentTemplate } from './catalog.ts';
import type { Dependencies } from './context.ts';
import { ApiError, badRequest } from './errors.ts';
import type { TemplateParam } from './template-data.ts';
import { applyKeyChangeToDeliveries } from './webhook-deliveries.ts';

/** Operator verbs, shared by /admin/v1 and `tms admin`. */
export interface AdminDependencies extends Dependencies {
  /** Drops cached API key lookups in this process after a change that must take effect now. */
  forgetCachedKeys(): void;
}

export const API_KEY_PREFIX = 'tms_live_';

export function presentWorkspace(row: WorkspaceRow) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    balance: row.balance,
    message_cap: row.message_cap,
    messages_used: row.messages_accepted,
    is_demo: row.is_demo === 1,
    created_at: formatUtc(row.created_at),
  };
}

export function presentLedgerEntry(row: LedgerRow) {
  return {
    id: row.id,
    kind: row.kind,
    amount: row.amount,
    balance_after: row.balance_after,
    message_count: row.message_count,
    reference: row.reference,
    note: row.note,
    created_at: formatUtc(row.created_at),
  };
}

export function presentApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    key_prefix: row.key_prefix,
    scopes: JSON.parse(row.scopes) as string[],
    webhook_url: row.webhook_url,
    rate_limit_per_second: row.rate_limit_per_second,
    revoked_at: formatUtcOrNull(row.revoked_at),
    created_at: formatUtc(row.created_at),
  };
}

export function presentSenderAccount(row: SenderAccountRow) {
  return {
    oa_id: row.oa_id,
    workspace_id: row.workspace_id,
    name: row.name,
    default_mode: row.default_mode,
    daily_quota: row.daily_quota,
    status: row.status,
    token_problem: row.token_problem,
    has_oa_secret_key: row.encrypted_oa_secret_key !== null,
    app_id: row.app_id,
    rsa_public_key: row.rsa_public_key,
    created_at: formatUtc(row.created_at),
  };
}

async function requireWorkspace(deps: Dependencies, id: string): Promise<WorkspaceRow> {
  const workspace = await findWorkspace(deps.store.db, id);
  if (!workspace) throw new ApiError('workspace_not_found', `workspace ${id} not found`);
  return workspace;
}

function masterKey(deps: Dependencies): Buffer {
  if (!deps.config.masterKey) throw new ApiError('internal_error', 'TMS_MASTER_KEY is not configured');
  return deps.config.masterKey;
}

/**
 * Whole numbers the operator sets are checked here too, not only by the request schemas: `tms
 * admin` calls these services directly, and a value out of a column's range must never be written.
 */
function requireWholeNumber(value: number, name: string, minimum: number, maximum: number): void {
  const problem = wholeNumberProblem(value, name, minimum, maximum);
  if (problem) throw badRequest(problem);
}

export async function createWorkspace(deps: Dependencies, input: { name: string; message_cap?: number | null; is_demo?: boolean }) {
  if (input.message_cap !== undefined && input.message_cap !== null) requireWholeNumber(input.message_cap, 'message_cap', 0, MAX_COUNT);
  const row = await insertWorkspace(deps.store.db, { name: input.name, messageCap: input.message_cap ?? null, isDemo: input.is_demo, now: deps.clock() });
  return presentWorkspace(row);
}

export async function listWorkspaces(deps: Dependencies, page: { limit?: number; offset?: number }) {
  const rows = await selectWorkspaces(deps.store.db, { limit: page.limit ?? 100, offset: page.offset ?? 0 });
  return { workspaces: rows.map(presentWorkspace), count: rows.length };
}

export async function getWorkspace(deps: Dependencies, id: string) {
  return presentWorkspace(await requireWorkspace(deps, id));
}

export async function changeWorkspace(
  deps: AdminDependencies,
  id: string,
  changes: { status?: WorkspaceRow['status']; message_cap?: number | null },
) {
  if (changes.message_cap !== undefined && changes.message_cap !== null) requireWholeNumber(changes.message_cap, 'message_cap', 0, MAX_COUNT);
  const row = await updateWorkspace(deps.store.db, id, changes, deps.clock());
  if (!row) throw new ApiError('workspace_not_found', `workspace ${id} not found`);
  deps.forgetCachedKeys();
  return presentWorkspace(row);
}

export async function topUp(deps: Dependencies, id: string, input: { amount: number; note?: string }) {
  requireWholeNumber(input.amount, 'amount', 1, MAX_WALLET_BALANCE_VND);
  const outcome = await topUpWallet(deps.store, { workspaceId: id, amount: input.amount, maxBalance: MAX_WALLET_BALANCE_VND, note: input.note ?? null, now: deps.clock() });
  if (outcome.kind === 'workspace_not_found') throw new ApiError('workspace_not_found', `workspace ${id} not found`);
  if (outcome.kind === 'balance_limit') {
    throw badRequest(`a wallet may hold at most ${MAX_WALLET_BALANCE_VND} VND; it holds ${outcome.balance} VND, so it can take at most ${MAX_WALLET_BALANCE_VND - outcome.balance} VND more`);
  }
  const { entry } = outcome;
  return { balance: entry.balance_after, entry: presentLedgerEntry(entry) };
}

export async function readWallet(deps: Dependencies, id: string, page: { limit?: number; offset?: number }) {
  const workspace = await requireWorkspace(deps, id);
  const rows = await listLedger(deps.store.db, id, { limit: page.limit ?? 50, offset: page.offset ?? 0 });
  return { workspace_id: id, balance: workspace.balance, ledger: rows.map(presentLedgerEntry), count: rows.length };
}

function checkWebhookUrl(deps: Dependencies, url: string | null | undefined): void {
  if (url === null || url === undefined) return;
  const problem = findWebhookUrlProblem(url, deps.config.allowPrivateWebhookTargets);
  if (problem) throw badRequest(problem);
}

/** Creates a key: the secret is returned once, stored as a SHA-256 hash and AES-256-GCM ciphertext. */
export async function createApiKey(
  deps: Dependencies,
  workspaceId: string,
  input: { name?: string; scopes: Scope[]; webhook_url?: string | null; rate_limit_per_second?: number | null },
) {
  await requireWorkspace(deps, workspaceId);
  checkWebhookUrl(deps, input.webhook_url);
  const key = createSecretToken(API_KEY_PREFIX);
  const now = deps.clock();
  const row: ApiKeyRow = {
    id: createSortableId('key', now),
    workspace_id: workspaceId,
    name: input.name ?? 'default',
    key_hash: sha256Hex(key),
    key_prefix: key.slice(0, API_KEY_PREFIX.length + 6),
    encrypted_key: encryptSecret(key, masterKey(deps)),
    scopes: JSON.stringify([...new Set(input.scopes)]),
    webhook_url: input.webhook_url ?? null,
    rate_limit_per_second: input.rate_limit_per_second ?? null,
    revoked_at: null,
    created_at: now,
  };
  await insertApiKey(deps.store.db, row);
  return { ...presentApiKey(row), key };
}

export async function listApiKeys(deps: Dependencies, workspaceId: string) {
  await requireWorkspace(deps, workspaceId);
  const rows = await selectApiKeys(deps.store.db, workspaceId);
  return { api_keys: rows.map(presentApiKey), count: rows.length };
}

export async function changeApiKey(
  deps: AdminDependencies,
  id: string,
  changes: { revoke?: boolean; webhook_url?: string | null; rate_limit_per_second?: number | null },
) {
  const existing = await findApiKey(deps.store.db, id);
  if (!existing) throw new ApiError('api_key_not_found', `API key ${id} not found`);
  checkWebhookUrl(deps, changes.webhook_url);
  const update: Partial<Pick<ApiKeyRow, 'revoked_at' | 'webhook_url' | 'rate_limit_per_second'>> = {};
  if (changes.revoke) update.revoked_at = existing.revoked_at ?? deps.clock();
  if (changes.webhook_url !== undefined) update.webhook_url = changes.webhook_url;
  if (changes.rate_limit_per_second !== undefined) update.rate_limit_per_second = changes.rate_limit_per_second;
  // An empty change (PATCH {}) has nothing to SET: answer with the key as it is.
  if (Object.keys(update).length === 0) return presentApiKey(existing);
  const row = await updateApiKey(deps.store.db, id, update);
  deps.forgetCachedKeys();
  await applyKeyChangeToDeliveries(deps, existing, row!);
  return presentApiKey(row!);
}

export interface ConnectSenderAccountInput {
  oa_id: string;
  name: string;
  default_mode?: 'plain' | 'hashphone';
  daily_quota: number;
  app_id: string;
  app_secret: string;
  refresh_token: string;
  /** The OA Secret Key of the app's webhook settings: verifies the platform's event signatures. */
  oa_secret_key?: string | null;
  rsa_public_key?: string | null;
}

/**
 * The app secret travels to the platform as the `secret_key` header, and the other credentials as
 * headers or form fields: one with a control or non-Latin-1 character, or surrounding whitespace,
 * can never work, and used to wedge the process's connection pool. Refused here, for the API and
 * `tms admin` alike.
 */
function requireSendableCredentials(input: ConnectSenderAccountInput): void {
  const credentials: [string, string | null | undefined][] = [
    ['app_id', input.app_id],
    ['app_secret', input.app_secret],
    ['refresh_token', input.refresh_token],
    ['oa_secret_key', input.oa_secret_key],
  ];
  for (const [field, value] of credentials) {
    if (value === null || value === undefined) continue;
    const problem = headerValueProblem(value);
    if (problem) throw badRequest(`${field} ${problem}`);
  }
}

export async function connectSenderAccount(deps: Dependencies, workspaceId: string, input: ConnectSenderAccountInput) {
  requireWholeNumber(input.daily_quota, 'daily_quota', 0, MAX_COUNT);
  requireSendableCredentials(input);
  await requireWorkspace(deps, workspaceId);
  const key = masterKey(deps);
  const now = deps.clock();
  const row = await upsertSenderAccount(deps.store.db, {
    oa_id: input.oa_id,
    workspace_id: workspaceId,
    name: input.name,
    default_mode: input.default_mode ?? 'plain',
    daily_quota: input.daily_quota,
    status: 'connected',
    app_id: input.app_id,
    encrypted_app_secret: encryptSecret(input.app_secret, key),
    encrypted_refresh_token: encryptSecret(input.refresh_token, key),
    encrypted_access_token: null,
    access_token_expires_at: null,
    rsa_public_key: input.rsa_public_key ?? null,
    encrypted_oa_secret_key: input.oa_secret_key ? encryptSecret(input.oa_secret_key, key) : null,
    // Connecting again is the operator's re-login: fresh credentials, no refresh in progress.
    token_refresh_lease_until: null,
    token_problem: null,
    created_at: now,
    updated_at: now,
  });
  if (!row) throw new ApiError('sender_account_taken', `sender account ${input.oa_id} is connected to another workspace`);
  deps.catalog.forgetSenderAccount(workspaceId, input.oa_id);
  return presentSenderAccount(row);
}

export async function listSenderAccounts(deps: Dependencies, workspaceId: string) {
  await requireWorkspace(deps, workspaceId);
  const rows = await selectSenderAccounts(deps.store.db, workspaceId);
  return { sender_accounts: rows.map(presentSenderAccount), count: rows.length };
}

export interface RegisterTemplateInput {
  template_id: string;
  name: string;
  status: TemplateStatus;
  template_type: number;
  oa_id: string;
  preview_url?: string;
  params: TemplateParam[];
  price: number;
}

export async function registerTemplate(deps: Dependencies, workspaceId: string, input: RegisterTemplateInput) {
  requireWholeNumber(input.price, 'price', 0, MAX_PRICE_VND);
  requireWholeNumber(input.template_type, 'template_type', 0, MAX_INT32);
  for (const param of input.params) {
    requireWholeNumber(param.max_length, `param "${param.name}" max_length`, 0, MAX_INT32);
    requireWholeNumber(param.min_length, `param "${param.name}" min_length`, 0, MAX_INT32);
  }
  await requireWorkspace(deps, workspaceId);
  const account = await findSenderAccount(deps.store.db, workspaceId, input.oa_id);
  if (!account) throw new ApiError('sender_account_not_found', `sender account ${input.oa_id} not found in workspace ${workspaceId}`);
  const names = new Set<string>();
  for (const param of input.params) {
    if (names.has(param.name)) throw badRequest(`param "${param.name}" is listed twice`);
    names.add(param.name);
    if (param.min_length > param.max_length) throw badRequest(`param "${param.name}" has min_length above max_length`);
  }
  const now = deps.clock();
  const row: TemplateRow = {
    template_id: input.template_id,
    workspace_id: workspaceId,
    oa_id: input.oa_id,
    name: input.name,
    status: input.status,
    template_type: input.template_type,
    preview_url: input.preview_url ?? '',
    params: JSON.stringify(input.params),
    price: input.price,
    price_source: 'operator',
    synced_at: null,
    created_at: now,
    updated_at: now,
  };
  const saved = await upsertTemplate(deps.store.db, row);
  if (!saved) throw new ApiError('template_taken', `template ${input.template_id} belongs to another workspace`);
  deps.catalog.forgetTemplate(workspaceId, input.template_id);
  return { ...presentTemplate({ ...saved, oa_name: account.name }), workspace_id: workspaceId };
}

export async function listWorkspaceTemplates(deps: Dependencies, workspaceId: string) {
  await requireWorkspace(deps, workspaceId);
  const rows = await selectTemplates(deps.store.db, workspaceId, {});
  return { templates: rows.map(presentTemplate), count: rows.length };
}
