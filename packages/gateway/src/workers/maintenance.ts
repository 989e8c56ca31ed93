import { createContext, type ServiceParts } from '../services/context.ts';
import { purgeExpiredConsoleSessions } from '../services/console/sessions.ts';
import { purgeExpiredIdempotencyRecords } from '../services/idempotency.ts';
import { purgeFinishedWebhookDeliveries } from '../services/webhook-deliveries.ts';
import { erasePersonalDataPastRetention } from '../services/personal-data-retention.ts';
import type { PeriodicTask } from './worker.ts';

/** These tasks make no platform call: a round is only store statements. */
const STORE_ONLY = 0;

/**
 * Housekeeping every worker runs: expired idempotency records are deleted once a minute, delivery
 * reports and messages' personal data past their retention and ended console sessions once an hour.
 */
export function maintenanceTasks(parts: ServiceParts): PeriodicTask[] {
  return [
    {
      name: 'purge_idempotency_records',
      intervalMs: 60_000,
      longestStepMs: STORE_ONLY,
      run: async () => {
        const purged = await purgeExpiredIdempotencyRecords({ ctx: createContext(parts, { kind: 'task', task: 'maintenance' }), input: {} });
        if (purged > 0) parts.log.info({ purged }, 'expired idempotency records purged');
      },
    },
    {
      name: 'purge_webhook_deliveries',
      intervalMs: 60 * 60_000,
      longestStepMs: STORE_ONLY,
      run: async () => {
        const purged = await purgeFinishedWebhookDeliveries({ ctx: createContext(parts, { kind: 'task', task: 'maintenance' }), input: {} });
        if (purged > 0) parts.log.info({ purged, retention_days: parts.config.webhooks.retentionDays }, 'finished delivery reports past their retention purged');
      },
    },
    {
      name: 'erase_personal_data',
      intervalMs: 60 * 60_000,
      longestStepMs: STORE_ONLY,
      run: async () => {
        const erased = await erasePersonalDataPastRetention({ ctx: createContext(parts, { kind: 'task', task: 'maintenance' }), input: {} });
        if (erased > 0) parts.log.info({ erased, retention_days: parts.config.messageRetentionDays }, 'personal data of messages past their retention erased');
      },
    },
    {
      name: 'purge_console_sessions',
      intervalMs: 60 * 60_000,
      longestStepMs: STORE_ONLY,
      run: async () => {
        const purged = await purgeExpiredConsoleSessions({ ctx: createContext(parts, { kind: 'task', task: 'maintenance' }), input: {} });
        if (purged > 0) parts.log.info({ purged }, 'ended console sessions purged');
      },
    },
  ];
}
