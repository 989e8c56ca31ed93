/**
 * Operator identity: named operator tokens, each shown once and stored as its SHA-256 hash, and
 * TMS_ADMIN_TOKEN as the bootstrap token. Every operator change is audited under the name of the
 * token that made it.
 */
import { hostname, userInfo } from 'node:os';
import { safeEqual, sha256Hex } from '../lib/crypto.ts';
import { createSecretToken, createSortableId } from '../lib/ids.ts';
import { findActiveOperatorToken, findOperatorToken, insertOperatorToken, listOperatorTokens as selectOperatorTokens, revokeOperatorToken as markRevoked } from '../store/operator-tokens.ts';
import type { OperatorTokenRow } from '../store/schema.ts';
import { recordAudit } from './audit.ts';
import type { Context, OperatorCaller, VerbCall } from './context.ts';
import { ApiError, badRequest } from './errors.ts';

/** How every named operator token begins; told apart from API keys (tms_live_) at a glance. */
export const OPERATOR_TOKEN_PREFIX = 'tms_op_';
export const BOOTSTRAP_OPERATOR_NAME = 'bootstrap token';
const MAX_NAME_CHARS = 100;

/** `tms admin` on a host: the operator is whoever runs it there. */
export function commandLineOperator(): OperatorCaller {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the host still says where it ran.
  }
  return { kind: 'operator', name: `tms admin (${user}@${hostname()})` };
}

/**
 * The operator a presented token stands for: the bootstrap token (compared in constant time) or an
 * active named token (found by its hash, cached for TMS_AUTH_CACHE_MS so a revocation reaches every
 * process within that time). Null for anything else.
 */
export async function authenticateOperator(ctx: Context, presented: string, bootstrapToken: string): Promise<OperatorCaller | null> {
  if (presented === '') return null;
  if (safeEqual(presented, bootstrapToken)) return { kind: 'operator', name: BOOTSTRAP_OPERATOR_NAME };
  if (!presented.startsWith(OPERATOR_TOKEN_PREFIX)) return null;
  const hash = sha256Hex(presented);
  const token = await ctx.parts.operatorTokens.getOrLoad(hash, async () => (await findActiveOperatorToken(ctx.store.db, hash)) ?? null);
  return token ? { kind: 'operator', name: token.name, tokenId: token.id } : null;
}

/** A token just made: its row and the token itself, which is never available again. */
export interface CreatedOperatorToken {
  row: OperatorTokenRow;
  token: string;
}

export async function createOperatorToken({ ctx, input }: VerbCall<OperatorCaller, { name: string }>): Promise<CreatedOperatorToken> {
  const name = input.name.trim();
  if (name === '' || name.length > MAX_NAME_CHARS) throw badRequest(`name must be 1 to ${MAX_NAME_CHARS} characters`);
  if (name === BOOTSTRAP_OPERATOR_NAME) throw badRequest(`"${BOOTSTRAP_OPERATOR_NAME}" names TMS_ADMIN_TOKEN; choose another name`);
  const token = createSecretToken(OPERATOR_TOKEN_PREFIX);
  const now = ctx.clock();
  const row: OperatorTokenRow = {
    id: createSortableId('opt', now),
    name,
    token_hash: sha256Hex(token),
    token_prefix: token.slice(0, OPERATOR_TOKEN_PREFIX.length + 6),
    created_by: ctx.caller.name ?? 'operator',
    created_at: now,
    revoked_at: null,
  };
  if (!(await insertOperatorToken(ctx.store.db, row))) throw badRequest(`an active operator token is already named "${name}"`);
  await recordAudit(ctx, { action: 'operator_token.create', workspaceId: null, target: row.id, before: null, after: { name, token_prefix: row.token_prefix } });
  return { row, token };
}

export async function listOperatorTokens({ ctx }: VerbCall<OperatorCaller, Record<string, never>>): Promise<OperatorTokenRow[]> {
  return selectOperatorTokens(ctx.store.db);
}

/** Revokes a named token: refused everywhere within TMS_AUTH_CACHE_MS (at once in this process). */
export async function revokeOperatorToken({ ctx, input }: VerbCall<OperatorCaller, { id: string }>): Promise<OperatorTokenRow> {
  const before = await findOperatorToken(ctx.store.db, input.id);
  if (!before) throw new ApiError('operator_token_not_found', `operator token ${input.id} not found`);
  const row = (await markRevoked(ctx.store.db, input.id, ctx.clock())) ?? before;
  ctx.parts.operatorTokens.clear();
  if (before.revoked_at === null) {
    await recordAudit(ctx, { action: 'operator_token.revoke', workspaceId: null, target: row.id, before: { name: row.name, revoked: false }, after: { name: row.name, revoked: true } });
  }
  return row;
}
