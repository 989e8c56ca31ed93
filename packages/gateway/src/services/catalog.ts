import { formatVietnamTime, nextVietnamMidnight, vietnamDay } from '../lib/vietnam-time.ts';
import { readQuotaReservations } from '../store/messages.ts';
import type { TemplateStatus } from '../store/schema.ts';
import { listSenderAccounts } from '../store/sender-accounts.ts';
import { listTemplates as selectTemplates, type TemplateWithOaName } from '../store/templates.ts';
import type { RequestContext } from './context.ts';
import { ApiError } from './errors.ts';
import { dailyQuotaOn } from './platform-quota.ts';
import { parseTemplateParams } from './template-data.ts';

/** The template of docs/api.md, plus its price in VND so callers can estimate cost. */
export function presentTemplate(row: TemplateWithOaName) {
  return {
    template_id: row.template_id,
    name: row.name,
    status: row.status,
    template_type: row.template_type,
    oa_id: row.oa_id,
    oa_name: row.oa_name,
    preview_url: row.preview_url,
    price: row.price,
    params: parseTemplateParams(row.params),
  };
}

export async function listTemplates(input: { ctx: RequestContext; query: { status?: TemplateStatus; oa_id?: string } }) {
  const rows = await selectTemplates(input.ctx.deps.store.db, input.ctx.caller.workspaceId, {
    status: input.query.status,
    oaId: input.query.oa_id,
  });
  return { templates: rows.map(presentTemplate), count: rows.length };
}

export async function listOas(input: { ctx: RequestContext }) {
  const rows = await listSenderAccounts(input.ctx.deps.store.db, input.ctx.caller.workspaceId);
  return { oas: rows.map((row) => ({ oa_id: row.oa_id, name: row.name })), count: rows.length };
}

/**
 * GET /quota: per sender account, today's quota from the platform (cached; see platform-quota.ts)
 * and our reservations. `remaining` is what batch acceptance would still grant today and `used`
 * what counts against the daily quota: platform use by others plus everything we accepted for today
 * (sent or still queued). When the platform cannot be asked for one account, that entry carries
 * `error` and falls back to the account's configured daily_quota; the others are unaffected.
 */
export async function readQuota(input: { ctx: RequestContext; query: { oa_id?: string } }) {
  const { ctx, query } = input;
  const accounts = await listSenderAccounts(ctx.deps.store.db, ctx.caller.workspaceId, query.oa_id);
  if (query.oa_id !== undefined && accounts.length === 0) throw new ApiError('sender_account_not_found', `sender account ${query.oa_id} not found`);
  // Platform lookups first (they may wait for a first answer), then our reservations, read last so
  // they are as current as possible.
  const lookups = await Promise.all(accounts.map((account) => ctx.deps.platformQuota.lookup(account.oa_id)));
  const now = ctx.deps.clock();
  const today = vietnamDay(now);
  const reserved = await readQuotaReservations(ctx.deps.store.db, accounts.map((account) => account.oa_id), today);
  const resetAt = formatVietnamTime(nextVietnamMidnight(now));
  const quotas = accounts.map((account, index) => {
    const quota = dailyQuotaOn(lookups[index]!, account.daily_quota, today);
    const used = quota.usedElsewhere + (reserved.get(account.oa_id) ?? 0);
    return {
      oa_id: account.oa_id,
      oa_name: account.name,
      daily_quota: quota.dailyQuota,
      remaining: Math.max(0, quota.dailyQuota - used),
      used,
      reset_at: resetAt,
      error: quota.error,
    };
  });
  return { quotas, count: quotas.length };
}
