/**
 * SQL of template sync (services/template-sync.ts): one statement per step, the same on SQLite and
 * PostgreSQL. The operator's price wins: the sync's UPDATE changes the price only of rows whose
 * price_source is 'platform', decided in the statement itself so a concurrent registration by the
 * operator (which sets price_source 'operator') is never overwritten.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, TemplateRow, TemplateStatus } from './schema.ts';

/** Ids per IN list: well below SQLite's and PostgreSQL's bound-parameter limits. */
const IDS_PER_QUERY = 500;

/** Workspaces with at least one connected sender account: what the periodic sync visits. */
export async function listWorkspacesWithConnectedAccounts(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('sender_accounts').select('workspace_id').distinct().where('status', '=', 'connected').orderBy('workspace_id').execute();
  return rows.map((row) => row.workspace_id);
}

/** The rows with these template ids, in any workspace (template ids are global on the platform). */
export async function findTemplatesByIds(db: Kysely<Database>, templateIds: readonly string[]): Promise<TemplateRow[]> {
  const rows: TemplateRow[] = [];
  for (let start = 0; start < templateIds.length; start += IDS_PER_QUERY) {
    const chunk = templateIds.slice(start, start + IDS_PER_QUERY);
    rows.push(...(await db.selectFrom('templates').selectAll().where('template_id', 'in', chunk).execute()));
  }
  return rows;
}

/** The ids of the templates the workspace has on this sender account. */
export async function listTemplateIdsOfAccount(db: Kysely<Database>, workspaceId: string, oaId: string): Promise<string[]> {
  const rows = await db.selectFrom('templates').select('template_id').where('workspace_id', '=', workspaceId).where('oa_id', '=', oaId).orderBy('template_id').execute();
  return rows.map((row) => row.template_id);
}

/** A template first seen through sync. False when the id already exists (registered meanwhile). */
export async function insertSyncedTemplate(db: Kysely<Database>, row: TemplateRow): Promise<boolean> {
  const inserted = await db
    .insertInto('templates')
    .values(row)
    .onConflict((conflict) => conflict.column('template_id').doNothing())
    .returning('template_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export interface SyncedTemplateChange {
  workspaceId: string;
  templateId: string;
  oaId: string;
  name: string;
  status: TemplateStatus;
  previewUrl: string;
  params: string;
  /** The platform's price: applied only while the row's price_source is 'platform'. */
  platformPrice: number;
  now: number;
}

/**
 * Applies the platform's view to a template of the workspace: name, status, sender account,
 * preview, params and synced_at always; the price only while price_source is 'platform'.
 * template_type and price_source are left as they are. False when the row is not the workspace's.
 */
export async function applySyncedTemplate(db: Kysely<Database>, change: SyncedTemplateChange): Promise<boolean> {
  const updated = await db
    .updateTable('templates')
    .set({
      oa_id: change.oaId,
      name: change.name,
      status: change.status,
      preview_url: change.previewUrl,
      params: change.params,
      price: sql<number>`CASE WHEN price_source = 'platform' THEN ${change.platformPrice} ELSE price END`,
      synced_at: change.now,
      updated_at: change.now,
    })
    .where('template_id', '=', change.templateId)
    .where('workspace_id', '=', change.workspaceId)
    .returning('template_id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** The platform confirmed the template as it is: only synced_at moves. */
export async function markTemplatesSynced(db: Kysely<Database>, workspaceId: string, templateIds: readonly string[], now: number): Promise<void> {
  for (let start = 0; start < templateIds.length; start += IDS_PER_QUERY) {
    const chunk = templateIds.slice(start, start + IDS_PER_QUERY);
    await db.updateTable('templates').set({ synced_at: now }).where('workspace_id', '=', workspaceId).where('template_id', 'in', chunk).execute();
  }
}
