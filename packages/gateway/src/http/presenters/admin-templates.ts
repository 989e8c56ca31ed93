import type { Static } from 'typebox';
import type { TemplateSyncSummary } from '../../services/template-sync.ts';
import type { TemplateWithOaName } from '../../services/vocabulary.ts';
import type { TemplateSyncResultSchema, TemplateSyncSummarySchema } from '../routes/admin/admin-schemas.ts';
import { presentTemplate } from './catalog.ts';

/** A template as registered by the operator: the public record and the workspace it belongs to. */
export function presentRegisteredTemplate(row: TemplateWithOaName) {
  return { ...presentTemplate(row), workspace_id: row.workspace_id };
}

export function presentTemplateList(rows: readonly TemplateWithOaName[]) {
  return { templates: rows.map(presentTemplate), count: rows.length };
}

function presentSyncSummary(summary: TemplateSyncSummary): Static<typeof TemplateSyncSummarySchema> {
  return {
    oa_id: summary.oaId,
    created: summary.created,
    updated: summary.updated,
    unchanged: summary.unchanged,
    failed: summary.failed.map((failure) => ({ template_id: failure.templateId, error: failure.error })),
    error: summary.error,
    skipped: summary.skipped,
  };
}

/** What a sync of one workspace did, per sender account. */
export function presentTemplateSync(workspaceId: string, summaries: readonly TemplateSyncSummary[]): Static<typeof TemplateSyncResultSchema> {
  return { workspace_id: workspaceId, accounts: summaries.map(presentSyncSummary), count: summaries.length };
}
