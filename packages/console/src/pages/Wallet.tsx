import { useId, useState } from 'react';
import { apiUrl } from '../api.ts';
import type { Wallet } from '../api-types.ts';
import { Pager } from '../components/actions.tsx';
import { Dash, DateTime, ErrorAlert, Loading, Money, PageHeading } from '../components/common.tsx';
import { formatNumber, vietnamLocalToIso } from '../format.ts';
import { useI18n, type MessageKey } from '../i18n/index.tsx';
import { useApi } from '../use-api.ts';

const LIMIT = 50;
const KIND_KEYS: Record<string, MessageKey> = { top_up: 'wallet.kind.top_up', charge: 'wallet.kind.charge', refund: 'wallet.kind.refund', adjustment: 'wallet.kind.adjustment' };

export function WalletPage() {
  const { t, language } = useI18n();
  const [offset, setOffset] = useState(0);
  const wallet = useApi<Wallet>('/wallet', { limit: LIMIT, offset });
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const ids = { from: useId(), to: useId() };
  const exportUrl = apiUrl('/wallet/ledger.csv', {
    from: from === '' ? undefined : new Date(vietnamLocalToIso(from)).toISOString(),
    to: to === '' ? undefined : new Date(vietnamLocalToIso(to)).toISOString(),
  });

  return (
    <section>
      <PageHeading title={t('wallet.title')}>{t('wallet.title')}</PageHeading>
      <ErrorAlert error={wallet.error} />
      {wallet.loading && !wallet.data ? <Loading /> : null}
      {wallet.data ? (
        <div className="stats">
          <div className="stat stat-balance">
            <span className="stat-label">{t('overview.balance')}</span>
            <span className="stat-value" data-testid="wallet-balance">
              <Money amount={wallet.data.balance} />
            </span>
          </div>
        </div>
      ) : null}
      <h2>{t('wallet.export')}</h2>
      <div className="filters">
        <div className="field">
          <label htmlFor={ids.from}>{t('messages.from')}</label>
          <input id={ids.from} type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.to}>{t('messages.to')}</label>
          <input id={ids.to} type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
        </div>
        <div className="filter-actions">
          <a className="button" href={exportUrl} download>
            {t('wallet.exportCsv')}
          </a>
        </div>
      </div>
      <h2>{t('wallet.ledger')}</h2>
      {wallet.data && wallet.data.ledger.length === 0 ? <p className="empty">{t('wallet.none')}</p> : null}
      {wallet.data && wallet.data.ledger.length > 0 ? (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">{t('wallet.ledger')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('wallet.createdAt')}</th>
                  <th scope="col">{t('wallet.kind')}</th>
                  <th scope="col" className="number">
                    {t('wallet.amount')}
                  </th>
                  <th scope="col" className="number">
                    {t('wallet.balanceAfter')}
                  </th>
                  <th scope="col" className="number">
                    {t('wallet.messageCount')}
                  </th>
                  <th scope="col">{t('wallet.reference')}</th>
                  <th scope="col">{t('wallet.note')}</th>
                </tr>
              </thead>
              <tbody>
                {wallet.data.ledger.map((entry) => (
                  <tr key={entry.id} data-entry-id={entry.id}>
                    <th scope="row">
                      <DateTime value={entry.created_at} />
                    </th>
                    <td>{KIND_KEYS[entry.kind] ? t(KIND_KEYS[entry.kind]!) : entry.kind}</td>
                    <td className={entry.amount < 0 ? 'number negative' : 'number'}>
                      <Money amount={entry.amount} />
                    </td>
                    <td className="number">
                      <Money amount={entry.balance_after} />
                    </td>
                    <td className="number">{formatNumber(entry.message_count, language)}</td>
                    <td className="mono">
                      <Dash value={entry.reference} />
                    </td>
                    <td>
                      <Dash value={entry.note} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} limit={LIMIT} count={wallet.data.ledger.length} hasMore={wallet.data.has_more} onChange={setOffset} />
        </>
      ) : null}
    </section>
  );
}
