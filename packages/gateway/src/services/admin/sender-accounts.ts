import { encryptSecret } from '../../lib/crypto.ts';
import { MAX_COUNT } from '../../lib/limits.ts';
import { headerValueProblem } from '../../platform/header-value.ts';
import type { SenderAccountRow } from '../../store/schema.ts';
import { listSenderAccounts as selectSenderAccounts, upsertSenderAccount } from '../../store/sender-accounts.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
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
  return row;
}

export async function listSenderAccounts({ ctx, input }: VerbCall<OperatorCaller, { workspaceId: string }>): Promise<SenderAccountRow[]> {
  await requireWorkspace(ctx, input.workspaceId);
  return selectSenderAccounts(ctx.store.db, input.workspaceId);
}
