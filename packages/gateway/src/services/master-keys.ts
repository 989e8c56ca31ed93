import { FIRST_FORMAT_KEY_ID, masterKeyRing } from '../config/master-key.ts';
import { decryptSecret, KEYED_FORMAT_MARK, masterKeyId, sealedKeyId, sealedPrefix, UnreadableSecretError } from '../lib/crypto.ts';
import { countSecretsPerKeyNotSealedWith, findSecretsNotSealedWith, SEALED_SECRET_KINDS, type SealedSecretKind } from '../store/sealed-secrets.ts';
import type { Context } from './context.ts';
import { ApiError } from './errors.ts';

/** The keys stored secrets are read under, the current one first; a process without a master key reads none. */
export function requireMasterKeyRing(ctx: Context): readonly Buffer[] {
  const ring = masterKeyRing(ctx.parts.config);
  if (!ring) throw new ApiError('internal_error', 'TMS_MASTER_KEY is not configured');
  return ring;
}

/** Stored secrets that this process's master keys cannot open (see findMasterKeyMismatch). */
export interface MasterKeyMismatch {
  /** Key ids the store's secrets name that this process does not hold, with how many secrets name each. */
  readonly missingKeyIds: Readonly<Record<string, number>>;
  /** Kinds whose sampled secret in the first format (no key id) none of the process's keys opens. */
  readonly unreadableFirstFormat: readonly SealedSecretKind[];
  readonly heldKeyIds: readonly string[];
  /** What is wrong and what to do, in words for the operator. */
  readonly problem: string;
}

/**
 * Whether this process's master keys (current and previous) can read every secret the store holds.
 * Checked before a process serves: one that cannot would start, then fail customers' messages one
 * by one as their retries run out. Cheap: one grouped scan per secret column (API keys and sender
 * accounts, never messages) counts secrets per key id without decrypting; of the secrets from
 * before key ids, one per column is opened, since only that tells which key they are under.
 * Null when all is readable, when the store holds no secrets, and without a master key (as
 * before, each use of a secret then reports it).
 */
export async function findMasterKeyMismatch(ctx: Context): Promise<MasterKeyMismatch | null> {
  const { config } = ctx.parts;
  const ring = masterKeyRing(config);
  if (!ring) return null;
  const held = ring.map(sealedPrefix);
  // Keys the operator declared lost: their secrets stay unreadable, and are no reason to refuse.
  const lost = new Set(config.lostMasterKeyIds);
  const missingKeyIds: Record<string, number> = {};
  const unreadableFirstFormat: SealedSecretKind[] = [];
  for (const kind of SEALED_SECRET_KINDS) {
    for (const { prefix, count } of await countSecretsPerKeyNotSealedWith(ctx.store.db, kind, held)) {
      const keyId = sealedKeyId(prefix) ?? prefix;
      if (!lost.has(keyId)) missingKeyIds[keyId] = (missingKeyIds[keyId] ?? 0) + count;
    }
    if (lost.has(FIRST_FORMAT_KEY_ID)) continue;
    const [firstFormat] = await findSecretsNotSealedWith(ctx.store.db, kind, { prefix: KEYED_FORMAT_MARK, afterId: null, limit: 1 });
    if (firstFormat && !opens(firstFormat.sealed, ring)) unreadableFirstFormat.push(kind);
  }
  if (Object.keys(missingKeyIds).length === 0 && unreadableFirstFormat.length === 0) return null;
  const heldKeyIds = ring.map(masterKeyId);
  const findings: string[] = [];
  const missing = Object.entries(missingKeyIds).map(([keyId, count]) => `${keyId} (${count} ${count === 1 ? 'secret' : 'secrets'})`);
  if (missing.length > 0) findings.push(`stored secrets are encrypted under master key ${missing.join(' and ')}, which this process does not hold`);
  if (unreadableFirstFormat.length > 0) {
    findings.push(`stored secrets from before key ids (${unreadableFirstFormat.join(', ')}) open under none of its keys (their id for TMS_MASTER_KEY_LOST_IDS: ${FIRST_FORMAT_KEY_ID})`);
  }
  const source = config.masterKeyFile ? ` (from ${config.masterKeyFile})` : '';
  return {
    missingKeyIds,
    unreadableFirstFormat,
    heldKeyIds,
    problem:
      `cannot read the store: ${findings.join('; ')}. This process holds ${heldKeyIds.join(', ')}${source}. ` +
      'Set TMS_MASTER_KEY to the key the store is under now and, during a rotation, keep the other key as TMS_MASTER_KEY_PREVIOUS ' +
      '(see the README, Rotating the master key). Only if that key is lost for good: name it in TMS_MASTER_KEY_LOST_IDS and ' +
      'connect and create again what was under it (see the README, Custody of the master key)',
  };
}

function opens(sealed: string, ring: readonly Buffer[]): boolean {
  try {
    decryptSecret(sealed, ring);
    return true;
  } catch (error) {
    if (error instanceof UnreadableSecretError) return false;
    throw error;
  }
}
