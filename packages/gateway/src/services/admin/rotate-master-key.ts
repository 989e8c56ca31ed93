/**
 * The operator's verbs of a master key rotation: the re-encryption (`tms admin rotate-master-key`
 * and POST /admin/v1/master-key/rotation), and the embedded mode's steps that edit secrets.json on
 * the machine (the command line only). Each is in the audit log, with counts, never key material.
 */
import { recordAudit } from '../audit.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';
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

/**
 * Re-encrypts every stored secret under the answering process's current key, reading old ones
 * under its previous key too. A run that leaves secrets behind is a failure naming them.
 */
export async function reEncryptStoredSecrets({ ctx, input }: VerbCall<OperatorCaller, MasterKeyRotationInput>): Promise<MasterKeyRotationResult> {
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
