/**
 * Every column that holds a secret sealed under the master key, read and rewritten for a master key
 * rotation. Rows are walked in primary-key order (resumable from any key), and each rewrite is a
 * compare-and-set on the old ciphertext, so a value changed meanwhile (a token refresh, the
 * operator connecting an account again) is never overwritten with a stale one.
 */
import { sql, type Kysely } from 'kysely';
import { runInTransaction, type Store } from './database.ts';
import type { Database } from './schema.ts';

/** Each kind of stored secret, by where it lives. */
export const SEALED_SECRET_COLUMNS = {
  api_key_signing_secrets: { table: 'api_keys', id: 'id', column: 'encrypted_key' },
  app_secrets: { table: 'sender_accounts', id: 'oa_id', column: 'encrypted_app_secret' },
  refresh_tokens: { table: 'sender_accounts', id: 'oa_id', column: 'encrypted_refresh_token' },
  access_tokens: { table: 'sender_accounts', id: 'oa_id', column: 'encrypted_access_token' },
  oa_secret_keys: { table: 'sender_accounts', id: 'oa_id', column: 'encrypted_oa_secret_key' },
} as const;

export type SealedSecretKind = keyof typeof SEALED_SECRET_COLUMNS;

export const SEALED_SECRET_KINDS = Object.keys(SEALED_SECRET_COLUMNS) as SealedSecretKind[];

export interface SealedSecret {
  readonly id: string;
  readonly sealed: string;
}

export interface ResealedSecret extends SealedSecret {
  /** The new ciphertext, written only if the row still holds `sealed`. */
  readonly resealed: string;
}

/**
 * Up to `limit` secrets of one kind, after `afterId` in key order, that do not begin with `prefix`
 * (the prefix of every ciphertext under the current key). Names come from SEALED_SECRET_COLUMNS only.
 */
export async function findSecretsNotSealedWith(
  db: Kysely<Database>,
  kind: SealedSecretKind,
  options: { prefix: string; afterId: string | null; limit: number },
): Promise<SealedSecret[]> {
  const { table, id, column } = SEALED_SECRET_COLUMNS[kind];
  // substr rather than LIKE: the same on both stores, and no wildcard characters to escape.
  const after = options.afterId === null ? sql`` : sql`AND ${sql.ref(id)} > ${options.afterId}`;
  const result = await sql<SealedSecret>`
    SELECT ${sql.ref(id)} AS id, ${sql.ref(column)} AS sealed FROM ${sql.table(table)}
    WHERE ${sql.ref(column)} IS NOT NULL AND substr(${sql.ref(column)}, 1, ${options.prefix.length}) <> ${options.prefix} ${after}
    ORDER BY ${sql.ref(id)} LIMIT ${options.limit}`.execute(db);
  return result.rows;
}

/** How many secrets of one kind are not under the key whose ciphertexts begin with `prefix`. */
export async function countSecretsNotSealedWith(db: Kysely<Database>, kind: SealedSecretKind, prefix: string): Promise<number> {
  const { table, column } = SEALED_SECRET_COLUMNS[kind];
  const result = await sql<{ count: number | string }>`
    SELECT count(*) AS count FROM ${sql.table(table)}
    WHERE ${sql.ref(column)} IS NOT NULL AND substr(${sql.ref(column)}, 1, ${prefix.length}) <> ${prefix}`.execute(db);
  return Number(result.rows[0]?.count ?? 0);
}

/**
 * Writes each new ciphertext where the row still holds the old one, in one short transaction.
 * Returns how many were written; the others changed meanwhile and are looked at again.
 */
export async function replaceSealedSecrets(store: Store, kind: SealedSecretKind, secrets: readonly ResealedSecret[]): Promise<number> {
  if (secrets.length === 0) return 0;
  const { table, id, column } = SEALED_SECRET_COLUMNS[kind];
  return runInTransaction(store, async (trx) => {
    let written = 0;
    for (const secret of secrets) {
      const result = await sql`
        UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${secret.resealed}
        WHERE ${sql.ref(id)} = ${secret.id} AND ${sql.ref(column)} = ${secret.sealed}`.execute(trx);
      written += Number(result.numAffectedRows ?? 0);
    }
    return written;
  });
}
