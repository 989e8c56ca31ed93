import type { Static } from 'typebox';
import { formatVietnamTime } from '../../lib/vietnam-time.ts';
import type { QuotaToday } from '../../services/catalog.ts';
import { parseTemplateParams } from '../../services/template-data.ts';
import type { SenderAccountRow, TemplateWithOaName } from '../../services/vocabulary.ts';
import type { QuotaEntrySchema } from '../routes/quota/get.ts';
import type { TemplateSchema } from '../routes/templates/list.ts';

/** The template of docs/api.md, with its price in VND so callers can estimate cost. */
export function presentTemplate(row: TemplateWithOaName): Static<typeof TemplateSchema> {
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

export function presentOa(row: SenderAccountRow) {
  return { oa_id: row.oa_id, name: row.name };
}

export function presentQuota(quota: QuotaToday): Static<typeof QuotaEntrySchema> {
  return {
    oa_id: quota.oaId,
    oa_name: quota.oaName,
    daily_quota: quota.dailyQuota,
    remaining: quota.remaining,
    used: quota.used,
    reset_at: formatVietnamTime(quota.resetAt),
    error: quota.error,
  };
}
