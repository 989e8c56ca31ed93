/**
 * Every column that holds a secret sealed under the master key, read and rewritten for a master key
 * rotation. Rows are walked in primary-key order (resumable from any key), and each rewrite is a
 * compare-and-set on the old ciphertext, so a value changed meanwhile (a token refresh, the
 * operator connecting an account again) is never overwritten with a stale one.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { KEYED_FORMAT_MARK, SEALED_PREFIX_LENGTH } from '../lib/crypto.ts';
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
 * The one condition of every query here: the column holds a secret that begins with none of
 * `prefixes` (each a sealedPrefix, or the format mark). Names come from SEALED_SECRET_COLUMNS only.
 */
function notSealedWith(column: string, prefixes: readonly string[]): RawBuilder<unknown> {
  // substr rather than LIKE: the same on both stores, and no wildcard characters to escape.
  const differs = prefixes.map((prefix) => sql`substr(${sql.ref(column)}, 1, ${prefix.length}) <> ${prefix}`);
  return differs.length === 0 ? sql`${sql.ref(column)} IS NOT NULL` : sql`${sql.ref(column)} IS NOT NULL AND ${sql.join(differs, sql` AND `)}`;
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
  const after = options.afterId === null ? sql`` : sql`AND ${sql.ref(id)} > ${options.afterId}`;
  const result = await sql<SealedSecret>`
    SELECT ${sql.ref(id)} AS id, ${sql.ref(column)} AS sealed FROM ${sql.table(table)}
    WHERE ${notSealedWith(column, [options.prefix])} ${after}
    ORDER BY ${sql.ref(id)} LIMIT ${options.limit}`.execute(db);
  return result.rows;
}

/** How many secrets of one kind are not under the key whose ciphertexts begin with `prefix`. */
export async function countSecretsNotSealedWith(db: Kysely<Database>, kind: SealedSecretKind, prefix: string): Promise<number> {
  const { table, column } = SEALED_SECRET_COLUMNS[kind];
  const result = await sql<{ count: number | string }>`
    SELECT count(*) AS count FROM ${sql.table(table)}
    WHERE ${notSealedWith(column, [prefix])}`.execute(db);
  return Number(result.rows[0]?.count ?? 0);
}

/**
 * Secrets of one kind under none of the keys whose sealedPrefix is given, counted per prefix (so
 * per key), in one scan; those in the first format, which name no key, are left out.
 */
export async function countSecretsPerKeyNotSealedWith(db: Kysely<Database>, kind: SealedSecretKind, prefixes: readonly string[]): Promise<{ prefix: string; count: number }[]> {
  const { table, column } = SEALED_SECRET_COLUMNS[kind];
  // GROUP BY 1: the same expression written twice would be two parameters, which PostgreSQL does not match.
  const result = await sql<{ prefix: string; count: number | string }>`
    SELECT substr(${sql.ref(column)}, 1, ${SEALED_PREFIX_LENGTH}) AS prefix, count(*) AS count FROM ${sql.table(table)}
    WHERE ${notSealedWith(column, prefixes)} AND substr(${sql.ref(column)}, 1, ${KEYED_FORMAT_MARK.length}) = ${KEYED_FORMAT_MARK}
    GROUP BY 1 ORDER BY 1`.execute(db);
  return result.rows.map((row) => ({ prefix: row.prefix, count: Number(row.count) }));
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
