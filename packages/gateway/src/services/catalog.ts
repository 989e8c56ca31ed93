import { nextVietnamMidnight, vietnamDay } from '../lib/vietnam-time.ts';
import { readQuotaReservations } from '../store/messages.ts';
import type { SenderAccountRow, TemplateStatus } from '../store/schema.ts';
import { listSenderAccounts } from '../store/sender-accounts.ts';
import { listTemplates as selectTemplates, type TemplateWithOaName } from '../store/templates.ts';
import { dailyQuotaOn } from '../caches/platform-quota.ts';
import type { Context, WorkspaceCaller, VerbCall } from './context.ts';
import { ApiError } from './errors.ts';

export async function listTemplates({ ctx, input }: VerbCall<WorkspaceCaller, { status?: TemplateStatus; oa_id?: string }>): Promise<TemplateWithOaName[]> {
  return selectTemplates(ctx.store.db, ctx.caller.workspaceId, { status: input.status, oaId: input.oa_id });
}

export async function listOas({ ctx }: VerbCall<WorkspaceCaller, Record<string, never>>): Promise<SenderAccountRow[]> {
  return listSenderAccounts(ctx.store.db, ctx.caller.workspaceId);
}

/** One sender account's daily quota today. */
export interface QuotaToday {
  oaId: string;
  oaName: string;
  dailyQuota: number;
  remaining: number;
  used: number;
  resetAt: number;
  /** Why the platform's figures are missing, when they are. */
  error: string | null;
}

/**
 * GET /quota: per sender account, today's quota from the platform (cached; see platform-quota.ts)
 * and our reservations. `remaining` is what batch acceptance would still grant today and `used`
 * what counts against the daily quota: platform use by others plus everything we accepted for today
 * (sent or still queued). When the platform cannot be asked for one account, that entry carries
 * `error` and falls back to the account's configured daily_quota; the others are unaffected.
 */
export async function readQuota({ ctx, input: query }: VerbCall<WorkspaceCaller, { oa_id?: string }>): Promise<QuotaToday[]> {
  return readQuotaOfWorkspace(ctx, ctx.caller.workspaceId, query);
}

/** readQuota for a workspace named by the caller (the operator's support view). */
export async function readQuotaOfWorkspace(ctx: Context, workspaceId: string, query: { oa_id?: string }): Promise<QuotaToday[]> {
  const accounts = await listSenderAccounts(ctx.store.db, workspaceId, query.oa_id);
  if (query.oa_id !== undefined && accounts.length === 0) throw new ApiError('sender_account_not_found', `sender account ${query.oa_id} not found`);
  // Platform lookups first (they may wait for a first answer), then our reservations, read last so
  // they are as current as possible.
  const lookups = await Promise.all(accounts.map((account) => ctx.parts.platformQuota.lookup(account.oa_id)));
  const now = ctx.clock();
  const today = vietnamDay(now);
  const reserved = await readQuotaReservations(ctx.store.db, accounts.map((account) => account.oa_id), today);
  const resetAt = nextVietnamMidnight(now);
  return accounts.map((account, index) => {
    const quota = dailyQuotaOn(lookups[index]!, account.daily_quota, today);
    const used = quota.usedElsewhere + (reserved.get(account.oa_id) ?? 0);
    return { oaId: account.oa_id, oaName: account.name, dailyQuota: quota.dailyQuota, remaining: Math.max(0, quota.dailyQuota - used), used, resetAt, error: quota.error };
  });
}
