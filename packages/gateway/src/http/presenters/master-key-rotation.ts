import type { Static } from 'typebox';
import type { MasterKeyRotationResult } from '../../services/admin/master-key-rotation.ts';
import type { MasterKeyRotationSchema } from '../routes/admin/master-key.ts';

/** What a re-encryption did, for /admin/v1 and `tms admin rotate-master-key` alike: key ids and counts, never a key. */
export function presentMasterKeyRotation(result: MasterKeyRotationResult): Static<typeof MasterKeyRotationSchema> {
  return {
    master_key_id: result.master_key_id,
    previous_master_key_id: result.previous_master_key_id,
    re_encrypted: { ...result.re_encrypted },
    remaining: { ...result.remaining },
    unreadable: result.unreadable.map((secret) => ({ kind: secret.kind, id: secret.id, problem: secret.problem })),
    complete: result.complete,
  };
}
