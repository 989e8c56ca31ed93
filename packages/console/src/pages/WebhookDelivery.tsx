import { useState } from 'react';
import { api, type ConsoleApiError } from '../api.ts';
import type { WebhookDeliveryDetail } from '../api-types.ts';
import { ErrorAlert, Loading, Notice, PageHeading } from '../components/common.tsx';
import { DeliveryReport } from '../components/DeliveryReport.tsx';
import { useI18n } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { useSignedIn } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';
import { useFollow } from '../use-follow.ts';

export function WebhookDeliveryPage({ id }: { id: string }) {
  const { t } = useI18n();
  const { permissions } = useSignedIn();
  const delivery = useApi<WebhookDeliveryDetail>(`/webhook-deliveries/${encodeURIComponent(id)}`);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const [redelivered, setRedelivered] = useState(false);
  // A report being (re)tried is followed until it settles, so the new attempt shows up by itself.
  useFollow(delivery.data?.status === 'pending', delivery.reload);

  const redeliver = async () => {
    setBusy(true);
    setError(null);
    setRedelivered(false);
    try {
      delivery.setData(await api.post<WebhookDeliveryDetail>(`/webhook-deliveries/${encodeURIComponent(id)}/redeliver`));
      setRedelivered(true);
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <p className="breadcrumb">
        <Link to="/webhook-deliveries">← {t('deliveries.title')}</Link>
      </p>
      <PageHeading title={`${t('deliveries.one')} ${id}`}>
        {t('deliveries.one')} <span className="mono">{id}</span>
      </PageHeading>
      <ErrorAlert error={delivery.error} />
      <ErrorAlert error={error} />
      {redelivered ? <Notice tone="success">{t('deliveries.redelivered')}</Notice> : null}
      {delivery.loading && !delivery.data ? <Loading /> : null}
      {delivery.data ? (
        <>
          <div className="actions">
            {permissions.canWrite ? (
              <button type="button" disabled={busy} onClick={() => void redeliver()}>
                {busy ? t('deliveries.redelivering') : t('deliveries.redeliver')}
              </button>
            ) : null}
            <button type="button" className="button-secondary" onClick={delivery.reload}>
              {t('common.refresh')}
            </button>
          </div>
          <DeliveryReport delivery={delivery.data} headingLevel={2} />
        </>
      ) : null}
    </section>
  );
}
