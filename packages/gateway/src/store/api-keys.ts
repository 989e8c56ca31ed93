import type { Kysely } from 'kysely';
import type { ApiKeyRow, Database, WorkspaceRow } from './schema.ts';

export async function insertApiKey(db: Kysely<Database>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export type ApiKeyWithWorkspace = ApiKeyRow & { workspace_status: WorkspaceRow['status'] };

/** The authentication lookup: by the SHA-256 of the presented key, with its workspace's status. */
export async function findApiKeyByHash(db: Kysely<Database>, keyHash: string): Promise<ApiKeyWithWorkspace | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .selectAll('api_keys')
    .select('workspaces.status as workspace_status')
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

export async function findApiKey(db: Kysely<Database>, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listApiKeys(db: Kysely<Database>, workspaceId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

export async function updateApiKey(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Pick<ApiKeyRow, 'name' | 'revoked_at' | 'webhook_url' | 'rate_limit_per_second'>>,
): Promise<ApiKeyRow | undefined> {
  return db.updateTable('api_keys').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * Records that a key was used (for the console's key list). Written at most once a minute per key
 * by each process (ApiKeyCache), and never moved backwards by a process whose clock is behind.
 */
export async function recordApiKeyUse(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now)]))
    .execute();
}
