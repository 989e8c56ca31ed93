import type { Kysely } from 'kysely';
import type { Database, TemplateRow, TemplateStatus } from './schema.ts';

/** Registers a template, or updates it when it already belongs to the same workspace. */
export async function upsertTemplate(db: Kysely<Database>, row: TemplateRow): Promise<TemplateRow | undefined> {
  const { template_id: _templateId, workspace_id: _workspaceId, created_at: _createdAt, ...changes } = row;
  return db
    .insertInto('templates')
    .values(row)
    .onConflict((conflict) => conflict.column('template_id').doUpdateSet(changes).where('templates.workspace_id', '=', row.workspace_id))
    .returningAll()
    .executeTakeFirst();
}

export async function findTemplate(db: Kysely<Database>, workspaceId: string, templateId: string): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('templates')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', templateId)
    .executeTakeFirst();
}

/** The workspace a template id is registered in, in any workspace. */
export async function findTemplateWorkspace(db: Kysely<Database>, templateId: string): Promise<string | undefined> {
  const row = await db.selectFrom('templates').select('workspace_id').where('template_id', '=', templateId).executeTakeFirst();
  return row?.workspace_id;
}

export type TemplateWithOaName = TemplateRow & { oa_name: string };

export async function listTemplates(
  db: Kysely<Database>,
  workspaceId: string,
  filter: { status?: TemplateStatus; oaId?: string },
): Promise<TemplateWithOaName[]> {
  let query = db
    .selectFrom('templates')
    .innerJoin('sender_accounts', 'sender_accounts.oa_id', 'templates.oa_id')
    .selectAll('templates')
    .select('sender_accounts.name as oa_name')
    .where('templates.workspace_id', '=', workspaceId);
  if (filter.status !== undefined) query = query.where('templates.status', '=', filter.status);
  if (filter.oaId !== undefined) query = query.where('templates.oa_id', '=', filter.oaId);
  return query.orderBy('templates.template_id').execute();
}
