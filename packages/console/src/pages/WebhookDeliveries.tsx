/** Delivery reports: filter by status and time, page through them, redeliver every failure since a time. */
import { useId, useState, type FormEvent } from 'react';
import { api, type ConsoleApiError } from '../api.ts';
import { DELIVERY_STATUSES, type RedeliverFailedResult, type WebhookDeliveryList } from '../api-types.ts';
import { Pager } from '../components/actions.tsx';
import { Dash, DateTime, deliveryStatusLabel, DeliveryStatusBadge, ErrorAlert, Loading, Notice, PageHeading } from '../components/common.tsx';
import { formatDateTime, isoToVietnamLocal, vietnamLocalToIso } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';
import { Link, navigate, useLocation } from '../router.tsx';
import { useSignedIn } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';

const LIMIT = 50;

function RedeliverFailed({ onDone }: { onDone(): void }) {
  const { t, language } = useI18n();
  const [since, setSince] = useState(() => isoToVietnamLocal(new Date(Date.now() - 24 * 3600_000).toISOString()));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const [result, setResult] = useState<RedeliverFailedResult | null>(null);
  const sinceId = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await api.post<RedeliverFailedResult>('/webhook-deliveries/redeliver-failed', { failed_since: new Date(vietnamLocalToIso(since)).toISOString() }));
      onDone();
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="form card" onSubmit={(event) => void submit(event)} aria-labelledby="redeliver-failed-heading">
      <h2 id="redeliver-failed-heading">{t('deliveries.redeliverFailed')}</h2>
      <div className="field">
        <label htmlFor={sinceId}>{t('deliveries.failedSince')}</label>
        <input id={sinceId} type="datetime-local" required value={since} onChange={(event) => setSince(event.target.value)} />
      </div>
      <ErrorAlert error={error} />
      {result ? (
        <Notice tone="success">
          {t('deliveries.redeliverFailedResult', { redelivered: result.redelivered, skipped: result.skipped })} (
          <DateTime value={result.failed_since} />)
        </Notice>
      ) : null}
      <button type="submit" disabled={busy || since === ''}>
        {t('deliveries.redeliverFailedSubmit', { since: since === '' ? '…' : formatDateTime(vietnamLocalToIso(since), language) })}
      </button>
    </form>
  );
}

export function WebhookDeliveriesPage() {
  const { t } = useI18n();
  const { permissions } = useSignedIn();
  const { search } = useLocation();
  const params = new URLSearchParams(search);
  const applied = { status: params.get('status') ?? '', from: params.get('from') ?? '', to: params.get('to') ?? '' };
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const list = useApi<WebhookDeliveryList>('/webhook-deliveries', { ...applied, limit: LIMIT, offset });
  const [draft, setDraft] = useState(() => ({
    status: applied.status,
    from: applied.from ? isoToVietnamLocal(applied.from) : '',
    to: applied.to ? isoToVietnamLocal(applied.to) : '',
  }));
  const ids = { status: useId(), from: useId(), to: useId() };

  const go = (filters: typeof applied, nextOffset: number) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(filters)) if (value !== '') query.set(name, value);
    if (nextOffset > 0) query.set('offset', String(nextOffset));
    const text = query.toString();
    navigate(`/webhook-deliveries${text === '' ? '' : `?${text}`}`);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    go(
      {
        status: draft.status,
        from: draft.from === '' ? '' : new Date(vietnamLocalToIso(draft.from)).toISOString(),
        to: draft.to === '' ? '' : new Date(vietnamLocalToIso(draft.to)).toISOString(),
      },
      0,
    );
  };

  return (
    <section>
      <PageHeading title={t('deliveries.title')}>{t('deliveries.title')}</PageHeading>
      <form className="filters" onSubmit={submit} aria-label={t('common.filters')}>
        <div className="field">
          <label htmlFor={ids.status}>{t('deliveries.status')}</label>
          <select id={ids.status} value={draft.status} onChange={(event) => setDraft({ ...draft, status: event.target.value })}>
            <option value="">{t('common.all')}</option>
            {DELIVERY_STATUSES.map((status) => (
              <option key={status} value={status}>
                {deliveryStatusLabel(status, t)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.from}>{t('messages.from')}</label>
          <input id={ids.from} type="datetime-local" value={draft.from} onChange={(event) => setDraft({ ...draft, from: event.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={ids.to}>{t('messages.to')}</label>
          <input id={ids.to} type="datetime-local" value={draft.to} onChange={(event) => setDraft({ ...draft, to: event.target.value })} />
        </div>
        <div className="filter-actions">
          <button type="submit">{t('common.apply')}</button>
          <button
            type="button"
            className="button-secondary"
            onClick={() => {
              setDraft({ status: '', from: '', to: '' });
              go({ status: '', from: '', to: '' }, 0);
            }}
          >
            {t('common.clear')}
          </button>
        </div>
      </form>
      <ErrorAlert error={list.error} />
      {list.loading && !list.data ? <Loading /> : null}
      {list.data && list.data.deliveries.length === 0 ? <p className="empty">{t('deliveries.none')}</p> : null}
      {list.data && list.data.deliveries.length > 0 ? (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">{t('deliveries.title')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('deliveries.id')}</th>
                  <th scope="col">{t('deliveries.status')}</th>
                  <th scope="col">{t('deliveries.message')}</th>
                  <th scope="col">{t('deliveries.url')}</th>
                  <th scope="col">{t('deliveries.attempts')}</th>
                  <th scope="col">{t('deliveries.lastStatusCode')}</th>
                  <th scope="col">{t('deliveries.lastError')}</th>
                  <th scope="col">{t('deliveries.nextAttemptAt')}</th>
                  <th scope="col">{t('deliveries.createdAt')}</th>
                </tr>
              </thead>
              <tbody>
                {list.data.deliveries.map((delivery) => (
                  <tr key={delivery.id}>
                    <th scope="row">
                      <Link to={`/webhook-deliveries/${encodeURIComponent(delivery.id)}`} className="mono">
                        {delivery.id}
                      </Link>
                    </th>
                    <td>
                      <DeliveryStatusBadge status={delivery.status} />
                    </td>
                    <td>
                      <Link to={`/messages/${encodeURIComponent(delivery.message_id)}`} className="mono">
                        {delivery.message_id}
                      </Link>
                    </td>
                    <td className="mono break">{delivery.url}</td>
                    <td>{delivery.attempts}</td>
                    <td className="mono">
                      <Dash value={delivery.last_status_code} />
                    </td>
                    <td>
                      <Dash value={delivery.last_error} />
                    </td>
                    <td>
                      <DateTime value={delivery.next_attempt_at} />
                    </td>
                    <td>
                      <DateTime value={delivery.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} limit={LIMIT} count={list.data.count} hasMore={list.data.has_more} onChange={(next) => go(applied, next)} />
        </>
      ) : null}
      {permissions.canWrite ? <RedeliverFailed onDone={list.reload} /> : null}
    </section>
  );
}
