import { MESSAGE_STATUSES, type Overview } from '../api-types.ts';
import { ErrorAlert, Loading, messageStatusLabel, Money, PageHeading } from '../components/common.tsx';
import { DeliveryRateChart } from '../components/DeliveryRateChart.tsx';
import { MessageTable, QuotaTable } from '../components/tables.tsx';
import { formatNumber } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { useApi } from '../use-api.ts';

export function OverviewPage() {
  const { t, language } = useI18n();
  const overview = useApi<Overview>('/overview');
  const data = overview.data;

  return (
    <section>
      <PageHeading title={t('overview.title')}>{t('overview.title')}</PageHeading>
      <ErrorAlert error={overview.error} />
      {overview.loading && !data ? <Loading /> : null}
      {data ? (
        <>
          <div className="stats">
            <div className="stat stat-balance">
              <span className="stat-label">{t('overview.balance')}</span>
              <span className="stat-value">
                <Money amount={data.balance} />
              </span>
              <Link to="/wallet">{t('overview.toWallet')}</Link>
            </div>
          </div>
          <h2>{t('overview.today')}</h2>
          <ul className="stats" aria-label={t('overview.today')}>
            {MESSAGE_STATUSES.map((status) => (
              <li key={status} className={`stat stat-${status}`}>
                <span className="stat-label">{messageStatusLabel(status, t)}</span>
                <span className="stat-value">{formatNumber(data.messages_today[status] ?? 0, language)}</span>
                <Link to={`/messages?status=${status}`} aria-label={t('overview.seeMessages', { status: messageStatusLabel(status, t) })}>
                  {t('overview.see')}
                </Link>
              </li>
            ))}
          </ul>
          <h2>{t('overview.deliveryRate')}</h2>
          <DeliveryRateChart days={data.delivery_rate} />
          <h2>{t('quota.title')}</h2>
          <QuotaTable quotas={data.quotas} />
          <h2>{t('overview.latestFailures')}</h2>
          <MessageTable messages={data.latest_failures} caption={t('overview.latestFailures')} />
        </>
      ) : null}
    </section>
  );
}
