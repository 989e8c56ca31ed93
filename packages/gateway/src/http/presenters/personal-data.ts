import type { Static } from 'typebox';
import { formatUtcOrNull } from '../../lib/vietnam-time.ts';
import type { PersonalDataPurge } from '../../services/admin/personal-data.ts';
import type { PersonalDataPurgeSchema } from '../routes/admin/personal-data.ts';

/** What a purge of a workspace's personal data did; never the phone it was asked for. */
export function presentPersonalDataPurge(purge: PersonalDataPurge): Static<typeof PersonalDataPurgeSchema> {
  return {
    workspace_id: purge.workspaceId,
    scope: purge.onePhone ? 'one_phone' : 'workspace',
    before: formatUtcOrNull(purge.before),
    erased: purge.erased,
    in_flight: purge.inFlight,
    reports_deleted: purge.reportsDeleted,
  };
}
