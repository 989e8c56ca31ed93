/** Tables shown on more than one page: messages, sender-account quotas, a delivery's attempt log. */
import type { DeliveryAttempt, Message, QuotaView } from '../api-types.ts';
import { formatNumber } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { Dash, DateTime, MessageStatusBadge } from './common.tsx';

export function MessageTable({ messages, caption }: { messages: Message[]; caption: string }) {
  const { t } = useI18n();
  if (messages.length === 0) return <p className="empty">{t('messages.none')}</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('messages.id')}</th>
            <th scope="col">{t('messages.status')}</th>
            <th scope="col">{t('messages.phone')}</th>
            <th scope="col">{t('messages.trackingId')}</th>
            <th scope="col">{t('messages.template')}</th>
            <th scope="col">{t('messages.senderAccount')}</th>
            <th scope="col">{t('messages.source')}</th>
            <th scope="col">{t('messages.createdAt')}</th>
            <th scope="col">{t('messages.error')}</th>
          </tr>
        </thead>
        <tbody>
          {messages.map((message) => (
            <tr key={message.msg_id}>
              <th scope="row">
                <Link to={`/messages/${encodeURIComponent(message.msg_id)}`} className="mono">
                  {message.msg_id}
                </Link>
              </th>
              <td>
                <MessageStatusBadge status={message.status} />
              </td>
              <td className="mono">
                <Dash value={message.phone} />
              </td>
              <td className="mono">{message.tracking_id}</td>
              <td className="mono">{message.template_id}</td>
              <td className="mono">{message.oa_id}</td>
              <td>{message.source}</td>
              <td>
                <DateTime value={message.created_at} />
              </td>
              <td className="error-cell">
                {message.error_code === null ? (
                  <span className="muted">—</span>
                ) : (
                  <span>
                    <span className="mono">{message.error_code}</span> {message.error_message}
                    {message.error_reason ? (
                      <span className="error-reason" lang="vi">
                        {' '}
                        — {message.error_reason}
                      </span>
                    ) : null}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function QuotaTable({ quotas }: { quotas: QuotaView[] }) {
  const { t, language } = useI18n();
  if (quotas.length === 0) return <p className="empty">{t('quota.none')}</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{t('quota.title')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('quota.senderAccount')}</th>
            <th scope="col">{t('quota.used')}</th>
            <th scope="col">{t('quota.remaining')}</th>
            <th scope="col">{t('quota.dailyQuota')}</th>
            <th scope="col">{t('quota.resetsAt')}</th>
          </tr>
        </thead>
        <tbody>
          {quotas.map((quota) => (
            <tr key={quota.oa_id}>
              <th scope="row">
                {quota.name} <span className="mono muted">{quota.oa_id}</span>
              </th>
              <td>
                <QuotaMeter quota={quota} />
              </td>
              <td>{formatNumber(quota.remaining, language)}</td>
              <td>{formatNumber(quota.daily_quota, language)}</td>
              <td>
                <DateTime value={quota.resets_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function QuotaMeter({ quota }: { quota: QuotaView }) {
  const { t, language } = useI18n();
  const label = t('quota.usedOf', { used: formatNumber(quota.used, language), total: formatNumber(quota.daily_quota, language) });
  return (
    <span className="quota-meter">
      <meter min={0} max={Math.max(quota.daily_quota, 1)} value={quota.used} aria-label={label} />
      <span>{label}</span>
    </span>
  );
}

export function AttemptLog({ attempts }: { attempts: DeliveryAttempt[] }) {
  const { t } = useI18n();
  if (attempts.length === 0) return <p className="empty">{t('deliveries.noAttempts')}</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{t('deliveries.attemptLog')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('deliveries.attempt')}</th>
            <th scope="col">{t('deliveries.startedAt')}</th>
            <th scope="col">{t('deliveries.url')}</th>
            <th scope="col">{t('deliveries.statusCode')}</th>
            <th scope="col">{t('deliveries.latency')}</th>
            <th scope="col">{t('deliveries.outcome')}</th>
            <th scope="col">{t('deliveries.error')}</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((attempt) => (
            <tr key={`${attempt.attempt}-${attempt.started_at}`}>
              <th scope="row">{attempt.attempt}</th>
              <td>
                <DateTime value={attempt.started_at} />
              </td>
              <td className="mono break">{attempt.url}</td>
              <td className="mono">
                <Dash value={attempt.status_code} />
              </td>
              <td>{t('common.milliseconds', { value: attempt.latency_ms })}</td>
              <td>{attempt.outcome}</td>
              <td>
                <Dash value={attempt.error} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
