/** The operator's one verb for a master key rotation: which step to take, and whether it finished. */
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { forgetPreviousKey, stageMasterKey, type ForgottenMasterKeyResult, type StagedMasterKeyResult } from './master-key-file.ts';
import { rotateMasterKey, type MasterKeyRotationResult } from './master-key-rotation.ts';

export interface RotateMasterKeyInput {
  /** Embedded mode, first step: a new key into secrets.json, the old one kept beside it. */
  readonly generateKey?: boolean;
  /** Embedded mode, last step: the old key out of secrets.json, once nothing needs it. */
  readonly forgetPrevious?: boolean;
  readonly batchSize?: number;
}

export type RotateMasterKeyResult = MasterKeyRotationResult | StagedMasterKeyResult | ForgottenMasterKeyResult;

/**
 * Without a step flag: re-encrypts every stored secret under the current key. A run that leaves
 * secrets behind is a failure (exit code 1), naming them, so no one drops the previous key on its word.
 */
export async function runMasterKeyRotation({ ctx, input }: VerbCall<OperatorCaller, RotateMasterKeyInput>): Promise<RotateMasterKeyResult> {
  if (input.generateKey && input.forgetPrevious) throw badRequest('--generate-key and --forget-previous are separate steps: give one at a time');
  if (input.generateKey) return stageMasterKey({ ctx, input: {} });
  if (input.forgetPrevious) return forgetPreviousKey({ ctx, input: {} });
  const result = await rotateMasterKey({ ctx, input: { batchSize: input.batchSize } });
  if (result.complete) return result;
  const unreadable = result.unreadable.map((secret) => `${secret.kind} ${secret.id}: ${secret.problem}`);
  throw new ApiError(
    'internal_error',
    [
      `stored secrets are still not under master key ${result.master_key_id}: ${JSON.stringify(result.remaining)}; keep the previous key.`,
      `re-encrypted by this run: ${JSON.stringify(result.re_encrypted)}`,
      ...(unreadable.length > 0 ? ['unreadable (give the process the key they name, or replace them: see the README, Rotating the master key):', ...unreadable] : ['they changed while this run read them: run it again']),
    ].join('\n'),
  );
}
