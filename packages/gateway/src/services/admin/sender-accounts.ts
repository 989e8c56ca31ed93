import { setTimeout as sleep } from 'node:timers/promises';
import { ReloginRequiredError } from '../../caches/access-tokens.ts';
import { encryptSecret } from '../../lib/crypto.ts';
import { PlatformUnavailableError } from '../../platform/zns-client.ts';
import { MAX_COUNT } from '../../lib/limits.ts';
import { headerValueProblem } from '../../platform/header-value.ts';
import type { SenderAccountRow } from '../../store/schema.ts';
import { changeSenderAccountStatus, findSenderAccount, findSenderAccountWorkspace, listSenderAccounts as selectSenderAccounts, upsertSenderAccount } from '../../store/sender-accounts.ts';
import { callAsAccount } from '../account-calls.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { platformUnavailable, refusalOf, rethrowAsUnavailable } from './platform-checks.ts';
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
  /**
   * Whether to ask the platform first (default true): a token refresh with these credentials. The
   * refresh token is single-use, so the rotated one the platform returns is what is stored, with
   * its access token. False only for set-up where the platform cannot be reached.
   */
  verify?: boolean;
}

/** The tokens connecting stores: the operator's refresh token as given, or the pair the platform issued for it. */
interface TokensToStore {
  refreshToken: string;
  accessToken: string | null;
  accessTokenExpiresAt: number | null;
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

/**
 * Spends the operator's refresh token on a token refresh, so an account whose credentials the
 * platform refuses is never stored as connected (its first send would fail instead).
 */
async function checkCredentials(ctx: Context<OperatorCaller>, input: ConnectSenderAccountInput): Promise<TokensToStore> {
  const what = `check sender account ${input.oa_id} with the platform`;
  const startedAt = ctx.clock();
  const answer = await ctx.parts.platform.refreshAccessToken({ appId: input.app_id, appSecret: input.app_secret, refreshToken: input.refresh_token }).catch((error: unknown) => {
    // A request that may have reached the platform may have spent the single-use refresh token.
    const maybeSpent = error instanceof PlatformUnavailableError && error.unknownOutcome !== null;
    return rethrowAsUnavailable(what, error, maybeSpent ? 'Nothing was stored, but the platform may have spent the refresh token: if a retry is refused, authorise the app again for a new one.' : undefined);
  });
  if (!answer.ok) {
    throw refusalOf(answer, 'sender_account_refused', what, `the platform refused the credentials of sender account ${input.oa_id} (check app_id and app_secret, and authorise the app again for a new refresh token)`);
  }
  // Counted from before the request, as the token refresh of dispatch does.
  return { refreshToken: answer.data.refreshToken, accessToken: answer.data.accessToken, accessTokenExpiresAt: startedAt + answer.data.expiresInSeconds * 1000 };
}

const STORE_ATTEMPTS = 5;
const STORE_RETRY_DELAY_MS = 200;

/**
 * Runs the write of a connect. Once the check spent the operator's refresh token, the rotated one
 * exists only in this process until the write commits, so a failed write (a busy or failing-over
 * database) is tried again a few times rather than losing the account's only valid token.
 */
async function writeKeepingSpentToken<T>(write: () => Promise<T>, tokenSpent: boolean): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (!tokenSpent || attempt >= STORE_ATTEMPTS) throw error;
      await sleep(STORE_RETRY_DELAY_MS * attempt);
    }
  }
}

/**
 * A sender account as the audit log keeps it, before and after a change: never its secrets (app
 * secret, tokens, OA secret key), only whether it has the optional ones.
 */
function auditedAccount(row: SenderAccountRow): Record<string, unknown> {
  return {
    name: row.name,
    status: row.status,
    default_mode: row.default_mode,
    daily_quota: row.daily_quota,
    app_id: row.app_id,
    has_oa_secret_key: row.encrypted_oa_secret_key !== null,
    has_rsa_public_key: row.rsa_public_key !== null,
  };
}

function accountTaken(oaId: string): ApiError {
  return new ApiError('sender_account_taken', `sender account ${oaId} is connected to another workspace`);
}

/** Connects a sender account to a workspace, or connects it again with fresh credentials. */
export async function connectSenderAccount({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string } & ConnectSenderAccountInput>): Promise<SenderAccountRow> {
  const { workspaceId } = input;
  requireWholeNumber(input.daily_quota, 'daily_quota', 0, MAX_COUNT);
  requireSendableCredentials(input);
  await requireWorkspace(ctx, workspaceId);
  const key = requireMasterKey(ctx);
  // Every refusal that does not need the platform comes before the check: a refresh token spent
  // on a connect that fails anyway would be lost.
  const owner = await findSenderAccountWorkspace(ctx.store.db, input.oa_id);
  if (owner !== undefined && owner !== workspaceId) throw accountTaken(input.oa_id);
  const verified = input.verify !== false;
  // For the audit log's `before`; read before the check, which spends the refresh token.
  const previous = await findSenderAccount(ctx.store.db, workspaceId, input.oa_id);
  const tokens = verified ? await checkCredentials(ctx, input) : { refreshToken: input.refresh_token, accessToken: null, accessTokenExpiresAt: null };
  const now = ctx.clock();
  const row = await writeKeepingSpentToken(() => upsertSenderAccount(ctx.store.db, {
    oa_id: input.oa_id,
    workspace_id: workspaceId,
    name: input.name,
    default_mode: input.default_mode ?? 'plain',
    daily_quota: input.daily_quota,
    status: 'connected',
    app_id: input.app_id,
    encrypted_app_secret: encryptSecret(input.app_secret, key),
    encrypted_refresh_token: encryptSecret(tokens.refreshToken, key),
    encrypted_access_token: tokens.accessToken === null ? null : encryptSecret(tokens.accessToken, key),
    access_token_expires_at: tokens.accessTokenExpiresAt,
    rsa_public_key: input.rsa_public_key ?? null,
    encrypted_oa_secret_key: input.oa_secret_key ? encryptSecret(input.oa_secret_key, key) : null,
    // Connecting again is the operator's re-login: fresh credentials, no refresh in progress.
    token_refresh_lease_until: null,
    token_problem: null,
    created_at: now,
    updated_at: now,
  }), verified);
  if (!row) throw accountTaken(input.oa_id);
  ctx.parts.catalog.forgetSenderAccount(workspaceId, input.oa_id);
  // New credentials: a token cached from the old ones must not be sent with any more.
  ctx.parts.accessTokens.forget(input.oa_id);
  await recordAudit(ctx, {
    action: 'sender_account.connect',
    workspaceId,
    target: row.oa_id,
    before: previous ? auditedAccount(previous) : null,
    after: { ...auditedAccount(row), verified },
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

/** Sets the account's status when it is still what `account` says, and audits the change. */
async function setStatus(ctx: Context<OperatorCaller>, account: SenderAccountRow, to: SenderAccountRow['status'], action: string): Promise<SenderAccountRow> {
  const { workspace_id: workspaceId, oa_id: oaId } = account;
  const changed = await changeSenderAccountStatus(ctx.store.db, { workspaceId, oaId, from: [account.status], to, now: ctx.clock() });
  // Another change came first (a token refresh marking it relogin_required, say): answer the account as it is now.
  if (!changed) return requireSenderAccount(ctx, workspaceId, oaId);
  ctx.parts.catalog.forgetSenderAccount(workspaceId, oaId);
  await recordAudit(ctx, { action, workspaceId, target: oaId, before: { status: account.status }, after: { status: changed.status } });
  return requireSenderAccount(ctx, workspaceId, oaId);
}

/**
 * Stops a sender account from sending: new sends naming it are refused (400
 * sender_account_not_connected) and its queued messages fail at dispatch with a refund. Its
 * credentials stay, so reconnect() resumes it. Disconnecting a disconnected account changes nothing.
 */
export async function disconnectSenderAccount({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; oaId: string }>): Promise<SenderAccountRow> {
  const account = await requireSenderAccount(ctx, input.workspaceId, input.oaId);
  if (account.status === 'disconnected') return account;
  const disconnected = await setStatus(ctx, account, 'disconnected', 'sender_account.disconnect');
  // What this process cached while the account was connected is no token for the reconnect's check.
  ctx.parts.accessTokens.forget(input.oaId);
  return disconnected;
}

/**
 * Lets a disconnected sender account send again with the credentials it has, once the platform
 * accepts them (unless `verify` is false): an access token (refreshed if the stored one is stale)
 * that GET quota accepts. The account stays disconnected while the platform is asked, and is
 * connected only after it said yes, so no send is accepted or dispatched on credentials it then
 * refuses. Refused credentials leave the account needing a new refresh token (relogin_required),
 * as dispatch would have found at its first send; a platform that cannot be asked leaves it
 * disconnected. One that already needs a new refresh token is connected again with new
 * credentials instead.
 */
export async function reconnectSenderAccount({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string; oaId: string; verify?: boolean }>): Promise<SenderAccountRow> {
  const account = await requireSenderAccount(ctx, input.workspaceId, input.oaId);
  if (account.status === 'connected') return account;
  if (account.status === 'relogin_required') {
    throw badRequest(`sender account ${input.oaId} needs a new refresh token: connect it again with new credentials (sender-accounts connect)`);
  }
  if (input.verify !== false) await confirmStoredCredentials(ctx, account);
  return setStatus(ctx, account, 'connected', 'sender_account.reconnect');
}

const STILL_DISCONNECTED = 'The account stays disconnected.';

/**
 * Asks the platform as the disconnected account (an access token, then GET quota), and throws
 * unless it says yes. A token refreshed on the way is stored whatever the answer (the refresh
 * token it replaced is spent); a refused refresh token has then marked the account
 * relogin_required, which is what it is.
 */
async function confirmStoredCredentials(ctx: Context<OperatorCaller>, account: SenderAccountRow): Promise<void> {
  const answer = await callAsAccount(ctx.parts.accessTokens.whileDisconnected(), account.oa_id, (token) => ctx.parts.platform.getQuota(token)).catch((error: unknown) => failedCheck(ctx, account, error));
  // Another change came first (connected again by someone else): the reconnect answers it as it is.
  if (answer === null) return;
  if (!answer.ok) throw refusalOf(answer, 'sender_account_refused', checkOf(account), `the platform refused sender account ${account.oa_id}`, STILL_DISCONNECTED);
}

const checkOf = (account: SenderAccountRow): string => `check sender account ${account.oa_id} with the platform`;

/** The operator's error for a check the platform did not answer yes to, or null when someone else connected the account meanwhile. */
async function failedCheck(ctx: Context<OperatorCaller>, account: SenderAccountRow, error: unknown): Promise<null> {
  if (error instanceof PlatformUnavailableError) throw platformUnavailable(checkOf(account), `the platform did not answer (${error.message})`, STILL_DISCONNECTED);
  if (!(error instanceof ReloginRequiredError)) throw error;
  ctx.parts.catalog.forgetSenderAccount(account.workspace_id, account.oa_id);
  const current = await requireSenderAccount(ctx, account.workspace_id, account.oa_id);
  if (current.status === 'relogin_required') throw new ApiError('sender_account_refused', `the platform refused the stored credentials of sender account ${account.oa_id}: ${error.reason}`);
  if (current.status === 'connected') return null;
  // Changed and changed back meanwhile: the platform did answer, but for an account that is no
  // longer the one asked about, so it is not connected; retrying offline would not help.
  throw new ApiError('sender_account_changed', `sender account ${account.oa_id} was changed by another request while the reconnect checked it with the platform (${error.reason}). ${STILL_DISCONNECTED} Read it, and reconnect it again if it should send.`);
}
