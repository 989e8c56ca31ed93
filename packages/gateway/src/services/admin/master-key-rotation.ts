/**
 * `tms admin rotate-master-key`: re-encrypts every stored secret under the current master key
 * (TMS_MASTER_KEY, or the data directory's masterKey), reading each under whichever key of the
 * process opens it. Batches are small, each rewrite is conditional on the old ciphertext, and
 * rows already under the current key are never selected, so a run can be interrupted anywhere,
 * repeated, or run beside serving processes that hold both keys.
 */
import { decryptSecret, encryptSecret, masterKeyId, sealedPrefix, UnknownMasterKeyError, UnreadableSecretError } from '../../lib/crypto.ts';
import {
  countSecretsNotSealedWith,
  findSecretsNotSealedWith,
  replaceSealedSecrets,
  SEALED_SECRET_KINDS,
  type ResealedSecret,
  type SealedSecretKind,
} from '../../store/sealed-secrets.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { requireMasterKeyRing } from '../master-keys.ts';

/** Secrets read and rewritten per transaction: short enough never to hold serving processes back. */
const DEFAULT_BATCH_SIZE = 200;
/**
 * Walks over one kind while rows keep changing under us. A row that changed meanwhile was written
 * by a serving process, almost always under the current key already; another walk picks up the rest.
 */
const MAX_WALKS = 5;

export type SecretCounts = Record<SealedSecretKind, number>;

export interface UnreadableSecret {
  readonly kind: SealedSecretKind;
  /** The API key's id or the sender account's oa_id. */
  readonly id: string;
  readonly problem: string;
}

export interface MasterKeyRotationResult {
  readonly master_key_id: string;
  readonly previous_master_key_id: string | null;
  /** Secrets rewritten under the current key by this run, per kind. */
  readonly re_encrypted: SecretCounts;
  /** Secrets still not under the current key when the run ended, per kind (0 everywhere when done). */
  readonly remaining: SecretCounts;
  readonly unreadable: readonly UnreadableSecret[];
  /** True when every stored secret is under the current key. */
  readonly complete: boolean;
}

export interface MasterKeyRotationInput {
  readonly batchSize?: number;
}

function zeroCounts(): SecretCounts {
  return Object.fromEntries(SEALED_SECRET_KINDS.map((kind) => [kind, 0])) as SecretCounts;
}

interface KindOutcome {
  readonly reEncrypted: number;
  readonly unreadable: UnreadableSecret[];
}

/** One walk over one kind in key order; returns what it wrote, what it could not read, and how many rows changed under it. */
async function walkKind(ctx: Context, kind: SealedSecretKind, ring: readonly Buffer[], batchSize: number): Promise<KindOutcome & { changedMeanwhile: number }> {
  const current = ring[0]!;
  const prefix = sealedPrefix(current);
  const unreadable: UnreadableSecret[] = [];
  let reEncrypted = 0;
  let changedMeanwhile = 0;
  let afterId: string | null = null;
  for (;;) {
    const batch = await findSecretsNotSealedWith(ctx.store.db, kind, { prefix, afterId, limit: batchSize });
    if (batch.length === 0) break;
    afterId = batch[batch.length - 1]!.id;
    const resealed: ResealedSecret[] = [];
    for (const secret of batch) {
      try {
        resealed.push({ ...secret, resealed: encryptSecret(decryptSecret(secret.sealed, ring), current) });
      } catch (error) {
        if (!(error instanceof UnknownMasterKeyError || error instanceof UnreadableSecretError)) throw error;
        unreadable.push({ kind, id: secret.id, problem: error.message });
      }
    }
    const written = await replaceSealedSecrets(ctx.store, kind, resealed);
    reEncrypted += written;
    changedMeanwhile += resealed.length - written;
  }
  return { reEncrypted, unreadable, changedMeanwhile };
}

async function rotateKind(ctx: Context, kind: SealedSecretKind, ring: readonly Buffer[], batchSize: number): Promise<KindOutcome> {
  let reEncrypted = 0;
  let unreadable: UnreadableSecret[] = [];
  for (let walk = 1; walk <= MAX_WALKS; walk += 1) {
    const outcome = await walkKind(ctx, kind, ring, batchSize);
    reEncrypted += outcome.reEncrypted;
    // Each walk sees every row still not under the current key, so its list replaces the last one.
    unreadable = outcome.unreadable;
    if (outcome.changedMeanwhile === 0) break;
  }
  return { reEncrypted, unreadable };
}

/** Re-encrypts every stored secret under the current master key and reports what it did and what is left. */
export async function rotateMasterKey({ ctx, input }: VerbCall<OperatorCaller, MasterKeyRotationInput>): Promise<MasterKeyRotationResult> {
  const ring = requireMasterKeyRing(ctx);
  const batchSize = input.batchSize ?? DEFAULT_BATCH_SIZE;
  const reEncrypted = zeroCounts();
  const remaining = zeroCounts();
  const unreadable: UnreadableSecret[] = [];
  for (const kind of SEALED_SECRET_KINDS) {
    const outcome = await rotateKind(ctx, kind, ring, batchSize);
    reEncrypted[kind] = outcome.reEncrypted;
    unreadable.push(...outcome.unreadable);
    remaining[kind] = await countSecretsNotSealedWith(ctx.store.db, kind, sealedPrefix(ring[0]!));
  }
  ctx.log.info({ re_encrypted: reEncrypted, remaining, master_key_id: masterKeyId(ring[0]!) }, 'master key rotation: re-encryption pass finished');
  return {
    master_key_id: masterKeyId(ring[0]!),
    previous_master_key_id: ring[1] ? masterKeyId(ring[1]) : null,
    re_encrypted: reEncrypted,
    remaining,
    unreadable,
    complete: Object.values(remaining).every((count) => count === 0),
  };
}

/** Whether every stored secret is under the current master key (nothing is decrypted). */
export async function countSecretsNotUnderCurrentKey(ctx: Context): Promise<SecretCounts> {
  const prefix = sealedPrefix(requireMasterKeyRing(ctx)[0]!);
  const remaining = zeroCounts();
  for (const kind of SEALED_SECRET_KINDS) remaining[kind] = await countSecretsNotSealedWith(ctx.store.db, kind, prefix);
  return remaining;
}
