import type { Kysely } from 'kysely';
import type { AuditLogRow, Database } from './schema.ts';
import { PLANNED_PER_RUN } from './postgres-prepared-statements.ts';

export async function insertAuditEntry(db: Kysely<Database>, row: AuditLogRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

/** A workspace's audit log, newest first (ids sort by time). */
export async function listAuditEntries(db: Kysely<Database>, workspaceId: string, page: { limit: number; offset: number }): Promise<AuditLogRow[]> {
  return db.selectFrom('audit_log').modifyFront(PLANNED_PER_RUN).selectAll().where('workspace_id', '=', workspaceId).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

/** The whole audit log (or one workspace's), newest first: the operator's view. */
export async function listAllAuditEntries(db: Kysely<Database>, filter: { workspaceId?: string }, page: { limit: number; offset: number }): Promise<AuditLogRow[]> {
  let query = db.selectFrom('audit_log').modifyFront(PLANNED_PER_RUN).selectAll();
  if (filter.workspaceId !== undefined) query = query.where('workspace_id', '=', filter.workspaceId);
  return query.orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}
