/**
 * The operator's verbs of a master key rotation: the re-encryption (`tms admin rotate-master-key`
 * and POST /admin/v1/master-key/rotation), and the embedded mode's steps that edit secrets.json on
 * the machine (the command line only). Each is in the audit log, with counts, never key material.
 */
import { masterKeyId } from '../../lib/crypto.ts';
import { recordAudit } from '../audit.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';
import { requireMasterKeyRing } from '../master-keys.ts';
import { forgetPreviousKey, stageMasterKey, type ForgottenMasterKeyResult, type StagedMasterKeyResult } from './master-key-file.ts';
import { rotateMasterKey, type MasterKeyRotationInput, type MasterKeyRotationResult } from './master-key-rotation.ts';

/**
 * Embedded mode's steps: `generate-key` puts a new key into secrets.json with the old one beside
 * it (first); `forget-previous` takes the old key out once nothing needs it (last).
 */
export type MasterKeyFileStep = 'generate-key' | 'forget-previous';

/** The error of a run that left secrets behind: what remains, and why, so no one drops the previous key on its word. */
function incompleteRotation(result: MasterKeyRotationResult): ApiError {
  const unreadable = result.unreadable.map((secret) => `${secret.kind} ${secret.id}: ${secret.problem}`);
  return new ApiError(
    'master_key_rotation_incomplete',
    [
      `stored secrets are still not under master key ${result.master_key_id}: ${JSON.stringify(result.remaining)}; keep the previous key.`,
      `re-encrypted by this run: ${JSON.stringify(result.re_encrypted)}`,
      ...(unreadable.length > 0 ? ['unreadable (give the process the key they name, or replace them: see the README, Rotating the master key):', ...unreadable] : ['they changed while this run read them: run it again']),
    ].join('\n'),
  );
}

export interface ReEncryptionInput extends MasterKeyRotationInput {
  /**
   * The id of the key to rotate to, when the caller cannot choose the process that runs the
   * rotation (over HTTP, whichever process answers does): one not yet deployed with the new key
   * would re-encrypt everything back under the old one, and report it complete.
   */
  readonly masterKeyId?: string;
}

/** The ids of the master keys this process holds: its current key, and its previous one during a rotation. */
export interface HeldMasterKeyIds {
  readonly master_key_id: string;
  readonly previous_master_key_id: string | null;
}

/** Which keys this process holds, by id (the keys themselves never leave it). */
export function readMasterKeyIds({ ctx }: VerbCall<OperatorCaller, object>): HeldMasterKeyIds {
  const [current, previous] = requireMasterKeyRing(ctx);
  return { master_key_id: masterKeyId(current!), previous_master_key_id: previous ? masterKeyId(previous) : null };
}

/** Refuses, before anything is re-encrypted, a run under another current key than the one the caller means. */
function requireCurrentKeyToBe(ctx: Context<OperatorCaller>, intended: string | undefined): void {
  if (intended === undefined) return;
  const held = readMasterKeyIds({ ctx, input: {} });
  if (held.master_key_id === intended) return;
  const asPrevious = held.previous_master_key_id === intended ? ` It holds ${intended} only as its previous key (TMS_MASTER_KEY_PREVIOUS, step 2 of the rotation).` : '';
  throw new ApiError(
    'master_key_mismatch',
    `the process that answered has master key ${held.master_key_id} as its current key, not ${intended}, the key to rotate to: it has not been deployed (or restarted) with that key as TMS_MASTER_KEY yet.${asPrevious} ` +
      'Nothing was re-encrypted. Deploy the new key to every process, then call again (see the README, Rotating the master key).',
  );
}

/**
 * Re-encrypts every stored secret under the answering process's current key, reading old ones
 * under its previous key too. A run that leaves secrets behind is a failure naming them.
 */
export async function reEncryptStoredSecrets({ ctx, input }: VerbCall<OperatorCaller, ReEncryptionInput>): Promise<MasterKeyRotationResult> {
  requireCurrentKeyToBe(ctx, input.masterKeyId);
  const result = await rotateMasterKey({ ctx, input });
  await recordAudit(ctx, {
    action: 'master_key.re_encrypt',
    workspaceId: null,
    target: null,
    before: null,
    after: { re_encrypted: result.re_encrypted, remaining: result.remaining, unreadable: result.unreadable.length, complete: result.complete },
  });
  if (!result.complete) throw incompleteRotation(result);
  return result;
}

/** A step that changes secrets.json on the machine: the command line only. */
export async function runMasterKeyFileStep({ ctx, input }: VerbCall<OperatorCaller, { step: MasterKeyFileStep }>): Promise<StagedMasterKeyResult | ForgottenMasterKeyResult> {
  if (input.step === 'generate-key') {
    const staged = stageMasterKey({ ctx, input: {} });
    await recordAudit(ctx, { action: 'master_key.generate', workspaceId: null, target: null, before: null, after: null });
    return staged;
  }
  const forgotten = await forgetPreviousKey({ ctx, input: {} });
  await recordAudit(ctx, { action: 'master_key.forget_previous', workspaceId: null, target: null, before: null, after: { previous_key_removed: forgotten.previous_key_removed } });
  return forgotten;
}
