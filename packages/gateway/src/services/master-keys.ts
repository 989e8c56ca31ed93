import { masterKeyRing } from '../config/master-key.ts';
import type { Context } from './context.ts';
import { ApiError } from './errors.ts';

/** The keys stored secrets are read under, the current one first; a process without a master key reads none. */
export function requireMasterKeyRing(ctx: Context): readonly Buffer[] {
  const ring = masterKeyRing(ctx.parts.config);
  if (!ring) throw new ApiError('internal_error', 'TMS_MASTER_KEY is not configured');
  return ring;
}
