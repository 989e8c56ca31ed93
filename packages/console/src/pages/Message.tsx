/** One message: its record, its timeline, cancel while queued, and the delivery reports sent for it. */
import { useState } from 'react';
import { api, type ConsoleApiError } from '../api.ts';
import type { CancelResponse, MessageDetail, TimelineEvent } from '../api-types.ts';
import { ConfirmButton } from '../components/actions.tsx';
import { Dash, DateTime, Details, ErrorAlert, Loading, MessageStatusBadge, Notice, PageHeading } from '../components/common.tsx';
import { DeliveryReport } from '../components/DeliveryReport.tsx';
import { useI18n, type MessageKey } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { useSignedIn } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';
import { useFollow } from '../use-follow.ts';

const EVENT_KEYS: Record<TimelineEvent['event'], MessageKey> = {
  created: 'timeline.created',
  scheduled: 'timeline.scheduled',
  sent: 'timeline.sent',
  delivered: 'timeline.delivered',
  failed: 'timeline.failed',
};

export function MessagePage({ id }: { id: string }) {
  const { t } = useI18n();
  const { permissions } = useSignedIn();
  const detail = useApi<MessageDetail>(`/messages/${encodeURIComponent(id)}`);
  const [actionError, setActionError] = useState<ConsoleApiError | null>(null);
  const [cancelled, setCancelled] = useState(false);
  const current = detail.data?.message;
  // A message on its way (not one scheduled for later) and its pending reports are followed until they settle.
  const onItsWay = current !== undefined && (current.status === 'sending' || current.status === 'sent' || (current.status === 'queued' && current.scheduled_at === null));
  const reportPending = detail.data?.reports.some((report) => report.status === 'pending') ?? false;
  useFollow(onItsWay || reportPending, detail.reload);

  const cancel = async () => {
    setActionError(null);
    try {
      await api.post<CancelResponse>(`/messages/${encodeURIComponent(id)}/cancel`);
      setCancelled(true);
      detail.reload();
    } catch (caught) {
      setActionError(toApiError(caught));
    }
  };

  const message = detail.data?.message;
  return (
    <section>
      <p className="breadcrumb">
        <Link to="/messages">← {t('messages.title')}</Link>
      </p>
      <PageHeading title={`${t('message.title')} ${id}`}>
        {t('message.title')} <span className="mono">{id}</span>
      </PageHeading>
      <ErrorAlert error={detail.error} />
      <ErrorAlert error={actionError} />
      {cancelled ? <Notice tone="success">{t('message.cancelled')}</Notice> : null}
      {detail.loading && !detail.data ? <Loading /> : null}
      {message && detail.data ? (
        <>
          {message.status === 'queued' && permissions.canWrite ? (
            <div className="actions">
              <ConfirmButton
                label={t('message.cancel')}
                confirmLabel={t('message.confirmCancel')}
                question={t('message.cancelQuestion')}
                onConfirm={cancel}
              />
            </div>
          ) : null}
          <Details
            items={[
              [t('messages.status'), <MessageStatusBadge status={message.status} />],
              [t('messages.id'), <span className="mono">{message.msg_id}</span>],
              [t('messages.trackingId'), <span className="mono">{message.tracking_id}</span>],
              [t('messages.phone'), <span className="mono"><Dash value={message.phone} /></span>],
              [t('message.carrier'), <Dash value={message.carrier} />],
              [t('messages.source'), message.source],
              [t('messages.template'), <span className="mono">{message.template_id}</span>],
              [t('messages.senderAccount'), <span className="mono">{message.oa_id}</span>],
              [t('message.providerId'), <span className="mono"><Dash value={message.provider_msg_id} /></span>],
              [t('message.errorCode'), <span className="mono"><Dash value={message.error_code} /></span>],
              [t('message.errorMessage'), <Dash value={message.error_message} />],
              [t('message.errorReason'), message.error_reason ? <span lang="vi">{message.error_reason}</span> : <Dash value={null} />],
              [t('message.scheduledAt'), <DateTime value={message.scheduled_at} />],
              [t('message.sentAt'), <DateTime value={message.sent_at} />],
              [t('message.deliveredAt'), <DateTime value={message.delivered_at} />],
              [t('message.failedAt'), <DateTime value={message.failed_at} />],
              [t('messages.createdAt'), <DateTime value={message.created_at} />],
            ]}
          />
          <h2>{t('message.timeline')}</h2>
          <ol className="timeline">
            {detail.data.timeline.map((event, index) => (
              <li key={`${event.event}-${index}`} className={`timeline-${event.event}`}>
                <span className="timeline-event">{t(EVENT_KEYS[event.event] ?? 'timeline.created')}</span>{' '}
                <DateTime value={event.at} />
                {event.error_code !== undefined && event.error_code !== null ? (
                  <div className="timeline-error">
                    <span className="mono">{event.error_code}</span> {event.error_message}
                    {event.error_reason ? (
                      <div lang="vi" className="error-reason">
                        {event.error_reason}
                      </div>
                    ) : null}
                  </div>
                ) : null}
              </li>
            ))}
          </ol>
          <h2>{t('message.reports')}</h2>
          {detail.data.reports.length === 0 ? <p className="empty">{t('message.noReports')}</p> : null}
          {detail.data.reports.map((report) => (
            <article key={report.id} className="card">
              <h3>
                {t('message.report')} <span className="mono">{report.id}</span>
              </h3>
              <DeliveryReport delivery={report} headingLevel={4} />
            </article>
          ))}
          <p>
            <button type="button" className="button-secondary" onClick={detail.reload}>
              {t('common.refresh')}
            </button>
          </p>
        </>
      ) : null}
    </section>
  );
}
