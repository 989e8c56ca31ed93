/** One delivery report in full: its state, the exact body and headers sent, and every attempt. */
import type { WebhookDeliveryDetail } from '../api-types.ts';
import { useI18n } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { Dash, DateTime, DeliveryStatusBadge, Details } from './common.tsx';
import { AttemptLog } from './tables.tsx';

export function DeliveryReport({ delivery, headingLevel }: { delivery: WebhookDeliveryDetail; headingLevel: 2 | 4 }) {
  const { t } = useI18n();
  const SubHeading = headingLevel === 2 ? 'h2' : 'h4';
  return (
    <div className="delivery-report">
      <Details
        items={[
          [t('deliveries.id'), <Link to={`/webhook-deliveries/${encodeURIComponent(delivery.id)}`} className="mono">{delivery.id}</Link>],
          [t('deliveries.status'), <DeliveryStatusBadge status={delivery.status} />],
          [t('deliveries.message'), <Link to={`/messages/${encodeURIComponent(delivery.message_id)}`} className="mono">{delivery.message_id}</Link>],
          [t('deliveries.apiKey'), <span className="mono">{delivery.api_key_id}</span>],
          [t('deliveries.url'), <span className="mono break">{delivery.url}</span>],
          [t('deliveries.attempts'), delivery.attempts],
          [t('deliveries.lastStatusCode'), <Dash value={delivery.last_status_code} />],
          [t('deliveries.lastError'), <Dash value={delivery.last_error} />],
          [t('deliveries.nextAttemptAt'), <DateTime value={delivery.next_attempt_at} />],
          [t('deliveries.deliveredAt'), <DateTime value={delivery.delivered_at} />],
          [t('deliveries.failedAt'), <DateTime value={delivery.failed_at} />],
          [t('deliveries.createdAt'), <DateTime value={delivery.created_at} />],
          [t('deliveries.updatedAt'), <DateTime value={delivery.updated_at} />],
        ]}
      />
      <SubHeading>{t('deliveries.body')}</SubHeading>
      <pre className="code" tabIndex={0} aria-label={t('deliveries.body')}>
        {delivery.body}
      </pre>
      <SubHeading>{t('deliveries.headers')}</SubHeading>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">{t('deliveries.headers')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('deliveries.headerName')}</th>
              <th scope="col">{t('deliveries.headerValue')}</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(delivery.headers).map(([name, value]) => (
              <tr key={name}>
                <th scope="row" className="mono">
                  {name}
                </th>
                <td className="mono break">{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <SubHeading>{t('deliveries.attemptLog')}</SubHeading>
      <AttemptLog attempts={delivery.attempt_log} />
    </div>
  );
}
