import type { Dependencies } from '../services/context.ts';
import { checkOverdueDeliveries, type DeliveryCheckSettings } from '../services/delivery-checks.ts';
import type { AccessTokens } from '../services/platform-tokens.ts';
import type { PeriodicTask } from './worker.ts';

/** Asks the platform about sent messages whose delivery event is overdue (services/delivery-checks.ts). */
export function deliveryCheckTask(deps: Dependencies, tokens: Pick<AccessTokens, 'accessTokenFor'>, settings: DeliveryCheckSettings): PeriodicTask {
  return {
    name: 'delivery-check',
    intervalMs: Math.min(60_000, settings.afterMs),
    run: async () => {
      const { checked, delivered } = await checkOverdueDeliveries(deps, tokens, settings);
      if (checked > 0) deps.log.info({ checked, delivered }, 'asked the platform about sent messages with an overdue delivery event');
    },
  };
}
