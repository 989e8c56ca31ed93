import type { Kysely } from 'kysely';
import type { Database, OperatorTokenRow } from './schema.ts';

/** Inserts a token; false when an active token already has this name (the partial unique index). */
export async function insertOperatorToken(db: Kysely<Database>, row: OperatorTokenRow): Promise<boolean> {
  const inserted = await db
    .insertInto('operator_tokens')
    .values(row)
    .onConflict((conflict) => conflict.column('name').where('revoked_at', 'is', null).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The active token whose secret hashes to `hash`. */
export async function findActiveOperatorToken(db: Kysely<Database>, hash: string): Promise<OperatorTokenRow | undefined> {
  return db.selectFrom('operator_tokens').selectAll().where('token_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
}

export async function findOperatorToken(db: Kysely<Database>, id: string): Promise<OperatorTokenRow | undefined> {
  return db.selectFrom('operator_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every token, active and revoked, newest first (ids sort by time). */
export async function listOperatorTokens(db: Kysely<Database>): Promise<OperatorTokenRow[]> {
  return db.selectFrom('operator_tokens').selectAll().orderBy('id', 'desc').execute();
}

/** Revokes a token (once: a second revocation keeps the first time); undefined when it was revoked already. */
export async function revokeOperatorToken(db: Kysely<Database>, id: string, now: number): Promise<OperatorTokenRow | undefined> {
  return db.updateTable('operator_tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
}
