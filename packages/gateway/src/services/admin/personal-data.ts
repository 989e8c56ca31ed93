/**
 * The operator's purge of one workspace's personal data, on a customer's request (a data subject
 * asking for erasure, the end of a contract): the phones, RSA ciphertexts and template data of its
 * finished messages are erased at once, whatever TMS_MESSAGE_RETENTION_DAYS says, with the
 * delivery reports that name those phones.
 */
import { normalizePhone } from '../../lib/phone.ts';
import { formatUtc, parseDateTime } from '../../lib/vietnam-time.ts';
import { deleteFinishedReportsOf, erasePersonalDataWindow, type PurgeCursor, type WorkspacePurgeScope } from '../../store/personal-data.ts';
import { recordAudit } from '../audit.ts';
import type { OperatorCaller, VerbCall } from '../context.ts';
import { ApiError, badRequest } from '../errors.ts';
import { requireWorkspace } from './preconditions.ts';

/** Messages read per transaction: short enough never to hold acceptance or dispatch back. */
const PURGE_WINDOW = 500;

export interface PersonalDataPurgeRequest {
  workspaceId: string;
  /** Only this recipient's messages (any form the API accepts; normalised). */
  phone?: string;
  /** Only messages created before this time: ISO 8601, Vietnam time without an offset. */
  before?: string;
}

export interface PersonalDataPurge {
  workspaceId: string;
  /** Messages whose phone and template data were erased now. */
  erased: number;
  /** Messages in scope still queued or sending: left as they are, to be purged once they finish. */
  inFlight: number;
  /** Finished delivery reports of the erased messages, deleted. */
  reportsDeleted: number;
  /** Whether the purge was limited to one phone (the phone itself is not repeated). */
  onePhone: boolean;
  before: number | null;
}

function scopeOf(input: PersonalDataPurgeRequest): WorkspacePurgeScope {
  const scope: WorkspacePurgeScope = { workspaceId: input.workspaceId };
  if (input.phone !== undefined) {
    const phone = normalizePhone(input.phone);
    if (phone === '') throw badRequest('phone is empty');
    scope.phone = phone;
  }
  if (input.before !== undefined) {
    const before = parseDateTime(input.before);
    if (before === null) throw new ApiError('invalid_date_range', `before must be an ISO 8601 date-time, got "${input.before}"`);
    scope.createdBefore = before;
  }
  return scope;
}

/**
 * Erases the personal data of a workspace's finished messages (sent, delivered, failed), optionally
 * of one phone and of messages created before a time, window by window; records it in the audit
 * log without the phone. Running it again erases what has finished since.
 */
export async function purgeWorkspacePersonalData({ ctx, input }: VerbCall<OperatorCaller, PersonalDataPurgeRequest>): Promise<PersonalDataPurge> {
  const scope = scopeOf(input);
  await requireWorkspace(ctx, input.workspaceId);
  const result: PersonalDataPurge = { workspaceId: input.workspaceId, erased: 0, inFlight: 0, reportsDeleted: 0, onePhone: scope.phone !== undefined, before: scope.createdBefore ?? null };
  let after: PurgeCursor | null = null;
  do {
    const window = await erasePersonalDataWindow(ctx.store, scope, { after, limit: PURGE_WINDOW });
    result.erased += window.erased;
    result.inFlight += window.inFlight;
    result.reportsDeleted += await deleteFinishedReportsOf(ctx.store, window.erasedIds);
    after = window.next;
  } while (after !== null);
  await recordAudit(ctx, {
    action: 'workspace.purge_personal_data',
    workspaceId: input.workspaceId,
    target: null,
    before: null,
    after: {
      scope: result.onePhone ? 'one phone' : 'every recipient',
      created_before: result.before === null ? null : formatUtc(result.before),
      erased: result.erased,
      in_flight: result.inFlight,
      reports_deleted: result.reportsDeleted,
    },
  });
  return result;
}
