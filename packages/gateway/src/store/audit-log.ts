import type { Kysely } from 'kysely';
import type { AuditLogRow, Database } from './schema.ts';

export async function insertAuditEntry(db: Kysely<Database>, row: AuditLogRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

/** A workspace's audit log, newest first (ids sort by time). */
export async function listAuditEntries(db: Kysely<Database>, workspaceId: string, page: { limit: number; offset: number }): Promise<AuditLogRow[]> {
  return db.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}
