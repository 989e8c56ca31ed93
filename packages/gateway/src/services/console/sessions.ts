import { randomBytes } from 'node:crypto';
import { safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { UNKNOWN_USER_HASH, verifyPassword } from '../../lib/passwords.ts';
import { deleteConsoleSession, deleteConsoleSessionsOfUser, deleteExpiredConsoleSessions, findConsoleSession, insertConsoleSession, touchConsoleSession } from '../../store/console-sessions.ts';
import { findConsoleUserByEmail, updateConsoleUser, type ConsoleUserWithWorkspace } from '../../store/console-users.ts';
import { recordAudit } from '../audit.ts';
import type { AnonymousCaller, ConsoleUserCaller, Context, TaskCaller, VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';
import { normalizeEmail } from './users.ts';

/** A signed-in session: the cookie value (only ever sent to the browser) and what the console shows. */
export interface ConsoleSession {
  /** The cookie's value; the store keeps only its SHA-256. */
  token: string;
  csrfToken: string;
  user: ConsoleUserWithWorkspace;
  expiresAt: number;
}

/**
 * A session's activity is written at most this often: a write per request would cost every page
 * view a commit, and the idle expiry does not need to be more exact than this.
 */
const LAST_SEEN_PRECISION_MS = 60_000;

/** Starts a session for a user whose password (or invitation) was just checked. */
export async function startConsoleSession(ctx: Context, user: ConsoleUserWithWorkspace): Promise<ConsoleSession> {
  const now = ctx.clock();
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  const expiresAt = now + ctx.parts.config.console.sessionMaxMs;
  await insertConsoleSession(ctx.store.db, {
    id_hash: sha256Hex(token),
    user_id: user.id,
    workspace_id: user.workspace_id,
    csrf_token: csrfToken,
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
  });
  await updateConsoleUser(ctx.store.db, user.id, { last_sign_in_at: now });
  return { token, csrfToken, user: { ...user, last_sign_in_at: now }, expiresAt };
}

export interface SignInInput {
  email: string;
  password: string;
  /** The client's address, for throttling. */
  address: string;
}

/**
 * Checks an e-mail address and password. Every failure answers the same (wrong address, wrong
 * password, no password set yet, suspended workspace) and takes as long, so the answer does not
 * tell who has an account.
 */
export async function signIn({ ctx, input }: VerbCall<AnonymousCaller, SignInInput>): Promise<ConsoleSession> {
  const email = normalizeEmail(input.email);
  const throttle = ctx.parts.signInThrottle;
  const wait = throttle.admit(email, input.address);
  if (wait > 0) throw new ApiError('rate_limited', 'too many failed sign-ins; wait before trying again', { 'retry-after': String(wait) });
  const user = await findConsoleUserByEmail(ctx.store.db, email);
  const matches = await verifyPassword(input.password, user?.password_hash ?? UNKNOWN_USER_HASH);
  if (!user || !matches || user.password_hash === null || user.workspace_status !== 'active') {
    throw new ApiError('invalid_credentials', 'wrong e-mail address or password');
  }
  throttle.recordSuccess(email, input.address);
  return startConsoleSession(ctx, user);
}

/** A live session's caller and CSRF token. */
export interface AuthenticatedSession {
  caller: ConsoleUserCaller;
  csrfToken: string;
  user: ConsoleUserWithWorkspace;
  expiresAt: number;
}

/**
 * The session of a cookie, if it is live: not past its absolute expiry, not idle too long, its
 * user still there and its workspace active. Activity is recorded (coarsely) to extend the idle time.
 */
export async function authenticateConsoleSession({ ctx, input }: VerbCall<AnonymousCaller, { token: string | undefined }>): Promise<AuthenticatedSession> {
  if (!input.token) throw new ApiError('unauthenticated', 'sign in to the console first');
  const idHash = sha256Hex(input.token);
  const session = await findConsoleSession(ctx.store.db, idHash);
  const now = ctx.clock();
  const live = session && session.expires_at > now && session.last_seen_at + ctx.parts.config.console.sessionIdleMs > now;
  if (!session || !live) {
    if (session) await deleteConsoleSession(ctx.store.db, idHash);
    throw new ApiError('unauthenticated', 'your console session has ended; sign in again');
  }
  if (session.user.workspace_status !== 'active') throw new ApiError('workspace_suspended', 'the workspace is suspended by the operator');
  if (now - session.last_seen_at >= LAST_SEEN_PRECISION_MS) await touchConsoleSession(ctx.store.db, idHash, now);
  const { user } = session;
  return {
    caller: { kind: 'console_user', workspaceId: user.workspace_id, userId: user.id, email: user.email, role: user.role },
    csrfToken: session.csrf_token,
    user,
    expiresAt: session.expires_at,
  };
}

/** Compares a request's CSRF token with its session's, in constant time. */
export function csrfTokenMatches(session: AuthenticatedSession, presented: string | undefined): boolean {
  return presented !== undefined && presented !== '' && safeEqual(presented, session.csrfToken);
}

export async function signOut({ ctx, input }: VerbCall<AnonymousCaller, { token: string }>): Promise<void> {
  await deleteConsoleSession(ctx.store.db, sha256Hex(input.token));
}

/** Ends every session of the signed-in user, on every device, this one included. */
export async function signOutEverywhere({ ctx }: VerbCall<ConsoleUserCaller, Record<string, never>>): Promise<number> {
  const ended = await deleteConsoleSessionsOfUser(ctx.store.db, ctx.caller.userId);
  await recordAudit(ctx, { action: 'session.sign_out_everywhere', workspaceId: ctx.caller.workspaceId, target: ctx.caller.userId, before: null, after: { sessions_ended: ended } });
  return ended;
}

/** Maintenance: sessions past their absolute expiry or idle too long (they already sign nobody in). */
export async function purgeExpiredConsoleSessions({ ctx }: VerbCall<TaskCaller, Record<string, never>>): Promise<number> {
  return deleteExpiredConsoleSessions(ctx.store.db, ctx.clock(), ctx.parts.config.console.sessionIdleMs);
}
