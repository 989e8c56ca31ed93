import { createContext, type ServiceParts } from '../services/context.ts';
import { syncAllWorkspaces } from '../services/template-sync.ts';
import { longestAccountCallMs } from '../services/account-calls.ts';
import type { PeriodicTask } from './worker.ts';

/**
 * Template sync on a schedule (TMS_TEMPLATE_SYNC_MS): every workspace's connected sender accounts,
 * first when the worker starts, then `everyMs` after each run ends (runs never overlap). Every
 * worker process runs it; a sync is idempotent, so several workers only repeat platform calls.
 */
export function templateSyncTask(parts: ServiceParts, everyMs: number): PeriodicTask {
  return {
    name: 'template_sync',
    intervalMs: everyMs,
    // Progress is reported after each platform call of the sync.
    longestStepMs: longestAccountCallMs(parts.accessTokens, parts.config.zns.timeoutMs),
    run: async (progress, stopping) => {
      const results = await syncAllWorkspaces({ ctx: createContext(parts, { kind: 'task', task: 'template-sync' }), input: { progress, stopping } });
      let created = 0;
      let updated = 0;
      let failed = 0;
      let accountErrors = 0;
      for (const { accounts } of results) {
        for (const account of accounts) {
          created += account.created;
          updated += account.updated;
          failed += account.failed.length;
          if (account.error !== null) accountErrors += 1;
        }
      }
      const fields = { workspaces: results.length, created, updated, failed, accountErrors };
      if (created + updated + failed + accountErrors > 0) parts.log.info(fields, 'templates synced from the platform');
      else parts.log.debug(fields, 'templates synced from the platform: no changes');
    },
  };
}
