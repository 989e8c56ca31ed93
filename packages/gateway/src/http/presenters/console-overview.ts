import type { Static } from 'typebox';
import type { Overview } from '../../services/console/overview.ts';
import type { OverviewSchema } from '../routes/console/overview.ts';
import { presentQuotaView } from './console-catalog.ts';
import { presentMessage } from './messages.ts';

export function presentOverview(overview: Overview): Static<typeof OverviewSchema> {
  return {
    balance: overview.balance,
    messages_today: overview.messagesToday,
    delivery_rate: overview.deliveryRate.map((day) => ({ day: day.day, sent: day.sent, delivered: day.delivered, failed: day.failed, rate: day.rate })),
    quotas: overview.quotas.map(presentQuotaView),
    latest_failures: overview.latestFailures.map(presentMessage),
  };
}
