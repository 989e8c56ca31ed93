/**
 * Master key rotation in embedded mode, where the key lives in the data directory's secrets.json
 * (TMS_MASTER_KEY unset): the file gains a new key with the old one beside it, and loses the old
 * one once no stored secret needs it. Each change replaces the file atomically.
 */
import { ConfigError } from '../../config/config-error.ts';
import { forgetPreviousMasterKey, stageNewMasterKey } from '../../config/secrets.ts';
import { masterKeyId } from '../../lib/crypto.ts';
import type { Context, OperatorCaller, VerbCall } from '../context.ts';
import { badRequest } from '../errors.ts';
import { requireMasterKeyRing } from '../master-keys.ts';
import { countSecretsNotUnderCurrentKey, type SecretCounts } from './master-key-rotation.ts';

export interface StagedMasterKeyResult {
  readonly master_key_id: string;
  readonly previous_master_key_id: string;
  readonly secrets_file: string;
  readonly next_step: string;
}

export interface ForgottenMasterKeyResult {
  readonly master_key_id: string;
  readonly previous_key_removed: boolean;
  readonly secrets_file: string;
}

/** The secrets file holding this process's master key; a key from the environment is the operator's to change. */
function requireKeyFile(ctx: Context): string {
  const file = ctx.parts.config.masterKeyFile;
  if (!file) {
    throw badRequest(
      'TMS_MASTER_KEY is set in the environment, so the key lives in your secret store, not in the data directory: ' +
        'generate the new key there and follow the rotation procedure (see the README, Rotating the master key)',
    );
  }
  return file;
}

/** Secrets-file problems (a rotation already under way, a key changed meanwhile) are refusals, not configuration errors at start. */
function refusingFileProblems<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ConfigError) throw badRequest(error.message.replace(/^Invalid configuration: /, ''));
    throw error;
  }
}

export function stageMasterKey({ ctx }: VerbCall<OperatorCaller, object>): StagedMasterKeyResult {
  const file = requireKeyFile(ctx);
  const staged = refusingFileProblems(() => stageNewMasterKey(file));
  return {
    master_key_id: masterKeyId(staged.masterKey),
    previous_master_key_id: masterKeyId(staged.previousMasterKey),
    secrets_file: file,
    next_step: `restart \`tms start\` so that it reads both keys, then run \`tms admin rotate-master-key\` (or POST /admin/v1/master-key/rotation with {"master_key_id":"${masterKeyId(staged.masterKey)}"})`,
  };
}

function describeRemaining(remaining: SecretCounts): string {
  return Object.entries(remaining)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(', ');
}

export async function forgetPreviousKey({ ctx }: VerbCall<OperatorCaller, object>): Promise<ForgottenMasterKeyResult> {
  const file = requireKeyFile(ctx);
  const current = requireMasterKeyRing(ctx)[0]!;
  const remaining = await countSecretsNotUnderCurrentKey(ctx);
  if (Object.values(remaining).some((count) => count > 0)) {
    throw badRequest(`stored secrets still need the previous key (${describeRemaining(remaining)}): run \`tms admin rotate-master-key\` first`);
  }
  const removed = refusingFileProblems(() => forgetPreviousMasterKey(file, current));
  return { master_key_id: masterKeyId(current), previous_key_removed: removed, secrets_file: file };
}
