import { sql, type Kysely } from 'kysely';
import type { Database, SenderAccountRow } from './schema.ts';

/**
 * The OAuth token state of a sender account: what the access-token manager reads, the
 * refresh lease that lets one process at a time spend the OA's single-use refresh token, and the
 * one-statement writes that keep the row valid whatever happens between them.
 * Every statement is a single portable UPDATE … RETURNING (SQLite ≥ 3.35 and PostgreSQL).
 */
export type TokenState = Pick<
  SenderAccountRow,
  | 'oa_id'
  | 'workspace_id'
  | 'status'
  | 'app_id'
  | 'encrypted_app_secret'
  | 'encrypted_refresh_token'
  | 'encrypted_access_token'
  | 'access_token_expires_at'
  | 'token_refresh_lease_until'
  | 'token_problem'
>;

const TOKEN_STATE_COLUMNS = [
  'oa_id',
  'workspace_id',
  'status',
  'app_id',
  'encrypted_app_secret',
  'encrypted_refresh_token',
  'encrypted_access_token',
  'access_token_expires_at',
  'token_refresh_lease_until',
  'token_problem',
] as const;

export async function readTokenState(db: Kysely<Database>, oaId: string): Promise<TokenState | undefined> {
  return db.selectFrom('sender_accounts').select(TOKEN_STATE_COLUMNS).where('oa_id', '=', oaId).executeTakeFirst();
}

/**
 * Claims the right to refresh the OA's tokens until `lease.until`, if nobody holds it (or the holder's
 * lease ran out: it crashed or hung). One conditional UPDATE, so two processes cannot both win.
 * Only an account in `status` (connected, or disconnected for the check of a reconnect) can be
 * claimed. Returns the row as it is after the claim (its refresh token is the one to spend), or
 * undefined when someone else holds the lease or the account is in another status.
 */
export async function claimTokenRefreshLease(
  db: Kysely<Database>,
  oaId: string,
  lease: { now: number; until: number; status: SenderAccountRow['status'] },
): Promise<TokenState | undefined> {
  return db
    .updateTable('sender_accounts')
    .set({ token_refresh_lease_until: lease.until })
    .where('oa_id', '=', oaId)
    .where('status', '=', lease.status)
    .where((eb) => eb.or([eb('token_refresh_lease_until', 'is', null), eb('token_refresh_lease_until', '<', lease.now)]))
    .returning(TOKEN_STATE_COLUMNS)
    .executeTakeFirst();
}

/** Gives the lease back, unless it has meanwhile passed to another process (ours ran out). */
export async function releaseTokenRefreshLease(db: Kysely<Database>, oaId: string, leaseUntil: number): Promise<void> {
  await db
    .updateTable('sender_accounts')
    .set({ token_refresh_lease_until: null })
    .where('oa_id', '=', oaId)
    .where('token_refresh_lease_until', '=', leaseUntil)
    .execute();
}

export interface RefreshedTokens {
  encryptedRefreshToken: string;
  encryptedAccessToken: string;
  accessTokenExpiresAt: number;
  now: number;
}

/**
 * Stores the pair the platform just issued, in one statement: the new refresh token (the old one is
 * dead now), the access token and its expiry; clears the lease and the problem. Unconditional on
 * purpose: the refresh token in hand is the only one certain to work, so it must land even if our
 * lease ran out or another process marked the account meanwhile. An account the operator
 * disconnected stays disconnected (but keeps the valid token); any other becomes connected.
 * Returns the account's status after the write, or undefined when the account no longer exists.
 */
export async function storeRefreshedTokens(db: Kysely<Database>, oaId: string, tokens: RefreshedTokens): Promise<SenderAccountRow['status'] | undefined> {
  const result = await db
    .updateTable('sender_accounts')
    .set({
      encrypted_refresh_token: tokens.encryptedRefreshToken,
      encrypted_access_token: tokens.encryptedAccessToken,
      access_token_expires_at: tokens.accessTokenExpiresAt,
      token_refresh_lease_until: null,
      token_problem: null,
      status: sql<SenderAccountRow['status']>`CASE WHEN status = 'disconnected' THEN 'disconnected' ELSE 'connected' END`,
      updated_at: tokens.now,
    })
    .where('oa_id', '=', oaId)
    .returning('status')
    .executeTakeFirst();
  return result?.status;
}

/**
 * Marks the account as needing the operator (status relogin_required, with the reason), clears the
 * access token and the lease; only while the row still holds the refresh token that was refused
 * (`refusedEncryptedRefreshToken`, the exact ciphertext read when the lease was claimed). If the
 * row's refresh token changed meanwhile (another process refreshed after our lease ran out, or the
 * operator connected the account again) nothing is marked and false is returned.
 */
export async function markReloginRequired(
  db: Kysely<Database>,
  oaId: string,
  input: { refusedEncryptedRefreshToken: string; problem: string; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('sender_accounts')
    .set({
      status: 'relogin_required',
      token_problem: input.problem,
      encrypted_access_token: null,
      access_token_expires_at: null,
      token_refresh_lease_until: null,
      updated_at: input.now,
    })
    .where('oa_id', '=', oaId)
    .where('encrypted_refresh_token', '=', input.refusedEncryptedRefreshToken)
    .returning('oa_id')
    .executeTakeFirst();
  return result !== undefined;
}
