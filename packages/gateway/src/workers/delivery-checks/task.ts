import type { ServiceParts } from '../../services/context.ts';
import { checkOverdueDeliveries, type DeliveryCheckSettings } from './engine.ts';
import type { PeriodicTask } from '../worker.ts';
import { longestAccountCallMs } from '../../services/account-calls.ts';

/** Most batches per run: after a long loss of events a worker catches up at up to 10 batches a minute. */
const BATCHES_PER_RUN = 10;

/** Asks the platform about sent messages whose delivery event is overdue (engine.ts). */
export function deliveryCheckTask(parts: ServiceParts, settings: DeliveryCheckSettings): PeriodicTask {
  return {
    name: 'delivery_check',
    intervalMs: Math.min(60_000, settings.afterMs),
    // Progress is reported after each status lookup.
    longestStepMs: longestAccountCallMs(parts.accessTokens, parts.config.zns.timeoutMs),
    run: async (progress, stopping) => {
      let checked = 0;
      let delivered = 0;
      for (let batch = 0; batch < BATCHES_PER_RUN && !stopping.aborted; batch += 1) {
        const result = await checkOverdueDeliveries(parts, parts.accessTokens, settings, { progress, stopping });
        checked += result.checked;
        delivered += result.delivered;
        if (result.checked < settings.batchSize) break;
      }
      if (checked > 0) parts.log.info({ checked, delivered }, 'asked the platform about sent messages with an overdue delivery event');
    },
  };
}
