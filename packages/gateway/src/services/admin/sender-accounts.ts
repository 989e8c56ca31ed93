import { encryptSecret } from '../../lib/crypto.ts';
import { MAX_COUNT } from '../../lib/limits.ts';
import { headerValueProblem } from '../../platform/header-value.ts';
import type { SenderAccountRow } from '../../store/schema.ts';
import { changeSenderAccountStatus, findSenderAccount, listSenderAccounts as selectSenderAccounts, upsertSenderAccount } from '../../store/sender-accounts.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { requireMasterKey, requireWholeNumber, requireWorkspace } from './preconditions.ts';

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

/** Connects a sender account to a workspace, or connects it again with fresh credentials. */
export async function connectSenderAccount({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string } & ConnectSenderAccountInput>): Promise<SenderAccountRow> {
  const { workspaceId } = input;
  requireWholeNumber(input.daily_quota, 'daily_quota', 0, MAX_COUNT);
  requireSendableCredentials(input);
  await requireWorkspace(ctx, workspaceId);
  const key = requireMasterKey(ctx);
  const now = ctx.clock();
  const row = await upsertSenderAccount(ctx.store.db, {
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
  ctx.parts.catalog.forgetSenderAccount(workspaceId, input.oa_id);
  // The credentials themselves never go into the log: only which ones were given.
  await recordAudit(ctx, {
    action: 'sender_account.connect',
    workspaceId,
    target: row.oa_id,
    before: null,
    after: { name: row.name, default_mode: row.default_mode, daily_quota: row.daily_quota, app_id: row.app_id, has_oa_secret_key: row.encrypted_oa_secret_key !== null, has_rsa_public_key: row.rsa_public_key !== null },
  });
  return row;
}

export async function listSenderAccounts({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string }>): Promise<SenderAccountRow[]> {
  await requireWorkspace(ctx, input.workspaceId);
  return selectSenderAccounts(ctx.store.db, input.workspaceId);
}

async function requireSenderAccount(ctx: Context<OperatorCaller>, workspaceId: string, oaId: string): Promise<SenderAccountRow> {
  await requireWorkspace(ctx, workspaceId);
  const account = await findSenderAccount(ctx.store.db, workspaceId, oaId);
  if (!account) throw new ApiError('sender_account_not_found', `sender account ${oaId} not found in workspace ${workspaceId}`);
  return account;
}

async function setStatus(ctx: Context<OperatorCaller>, account: SenderAccountRow, to: SenderAccountRow['status'], action: string): Promise<SenderAccountRow> {
  const { workspace_id: workspaceId, oa_id: oaId } = account;
  const changed = await changeSenderAccountStatus(ctx.store.db, { workspaceId, oaId, from: [account.status], to, now: ctx.clock() });
  // Another change came first (a token refresh marking it relogin_required, say): answer the account as it is now.
  if (!changed) return requireSenderAccount(ctx, workspaceId, oaId);
  ctx.parts.catalog.forgetSenderAccount(workspaceId, oaId);
  await recordAudit(ctx, { action, workspaceId, target: oaId, before: { status: account.status }, after: { status: changed.status } });
  return changed;
}

/**
 * Stops a sender account from sending: new sends naming it are refused (409
 * sender_account_not_connected) and its queued messages fail at dispatch with a refund. Its
 * credentials stay, so reconnect() resumes it. Disconnecting a disconnected account changes nothing.
 */
export async function disconnectSenderAccount({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; oaId: string }>): Promise<SenderAccountRow> {
  const account = await requireSenderAccount(ctx, input.workspaceId, input.oaId);
  if (account.status === 'disconnected') return account;
  return setStatus(ctx, account, 'disconnected', 'sender_account.disconnect');
}

/**
 * Lets a disconnected sender account send again with the credentials it has. One that needs a new
 * refresh token (relogin_required) is connected again with new credentials instead.
 */
export async function reconnectSenderAccount({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; oaId: string }>): Promise<SenderAccountRow> {
  const account = await requireSenderAccount(ctx, input.workspaceId, input.oaId);
  if (account.status === 'connected') return account;
  if (account.status === 'relogin_required') {
    throw badRequest(`sender account ${input.oaId} needs a new refresh token: connect it again with new credentials (sender-accounts connect)`);
  }
  return setStatus(ctx, account, 'connected', 'sender_account.reconnect');
}
