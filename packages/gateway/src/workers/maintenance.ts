import { createContext, type ServiceParts } from '../services/context.ts';
import { purgeExpiredIdempotencyRecords } from '../services/idempotency.ts';
import { purgeFinishedWebhookDeliveries } from '../services/webhook-deliveries.ts';
import type { PeriodicTask } from './worker.ts';

/**
 * Housekeeping every worker runs: expired idempotency records are deleted once a minute, delivery
 * reports past their retention once an hour.
 */
export function maintenanceTasks(deps: ServiceParts): PeriodicTask[] {
  return [
    {
      name: 'purge-idempotency-records',
      intervalMs: 60_000,
      run: async () => {
        const purged = await purgeExpiredIdempotencyRecords({ ctx: createContext(deps, { kind: 'task', task: 'maintenance' }), input: {} });
        if (purged > 0) deps.log.info({ purged }, 'expired idempotency records purged');
      },
    },
    {
      name: 'purge-webhook-deliveries',
      intervalMs: 60 * 60_000,
      run: async () => {
        const purged = await purgeFinishedWebhookDeliveries({ ctx: createContext(deps, { kind: 'task', task: 'maintenance' }), input: {} });
        if (purged > 0) deps.log.info({ purged, retention_days: deps.config.webhooks.retentionDays }, 'finished delivery reports past their retention purged');
      },
    },
  ];
}
