import { formatVietnamTime, nextVietnamMidnight, vietnamDay } from '../lib/vietnam-time.ts';
import { readQuotaReservations } from '../store/messages.ts';
import type { TemplateStatus } from '../store/schema.ts';
import { listSenderAccounts } from '../store/sender-accounts.ts';
import { listTemplates as selectTemplates, type TemplateWithOaName } from '../store/templates.ts';
import type { RequestContext } from './context.ts';
import { notFound } from './errors.ts';
import { parseTemplateParams } from './template-data.ts';

/** The template of section 2.1, plus its price in VND so callers can estimate cost. */
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
 * GET /quota: today's use per sender account, from the reservations made at acceptance and the
 * account's configured daily quota (the platform's own figures come with the platform client).
 */
export async function readQuota(input: { ctx: RequestContext; query: { oa_id?: string } }) {
  const { ctx, query } = input;
  const accounts = await listSenderAccounts(ctx.deps.store.db, ctx.caller.workspaceId, query.oa_id);
  if (query.oa_id !== undefined && accounts.length === 0) throw notFound(`sender account ${query.oa_id} not found`);
  const now = ctx.deps.clock();
  const reserved = await readQuotaReservations(ctx.deps.store.db, accounts.map((account) => account.oa_id), vietnamDay(now));
  const resetAt = formatVietnamTime(nextVietnamMidnight(now));
  const quotas = accounts.map((account) => {
    const used = reserved.get(account.oa_id) ?? 0;
    return {
      oa_id: account.oa_id,
      oa_name: account.name,
      daily_quota: account.daily_quota,
      remaining: Math.max(0, account.daily_quota - used),
      used,
      reset_at: resetAt,
      error: null,
    };
  });
  return { quotas, count: quotas.length };
}
