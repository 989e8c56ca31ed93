import type { SenderAccountList } from '../api-types.ts';
import { CopyButton, downloadText } from '../components/actions.tsx';
import { DateTime, Details, ErrorAlert, Loading, PageHeading } from '../components/common.tsx';
import { QuotaMeter } from '../components/tables.tsx';
import { formatNumber } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';
import { useApi } from '../use-api.ts';

export function SenderAccountsPage() {
  const { t, language } = useI18n();
  const accounts = useApi<SenderAccountList>('/sender-accounts');

  return (
    <section>
      <PageHeading title={t('accounts.title')}>{t('accounts.title')}</PageHeading>
      <ErrorAlert error={accounts.error} />
      {accounts.loading && !accounts.data ? <Loading /> : null}
      {accounts.data && accounts.data.sender_accounts.length === 0 ? <p className="empty">{t('accounts.none')}</p> : null}
      {accounts.data?.sender_accounts.map((account) => (
        <article key={account.oa_id} className="card" aria-labelledby={`account-${account.oa_id}`}>
          <h2 id={`account-${account.oa_id}`}>
            {account.name} <span className="mono muted">{account.oa_id}</span>
          </h2>
          <Details
            items={[
              [t('accounts.status'), account.status],
              [t('accounts.defaultMode'), account.default_mode],
              [t('quota.used'), <QuotaMeter quota={account.quota} />],
              [t('quota.remaining'), formatNumber(account.quota.remaining, language)],
              [t('quota.dailyQuota'), formatNumber(account.quota.daily_quota, language)],
              [t('quota.resetsAt'), <DateTime value={account.quota.resets_at} />],
            ]}
          />
          <h3>{t('accounts.rsaKey')}</h3>
          {account.rsa_public_key ? (
            <>
              <p className="muted">{t('accounts.rsaHint')}</p>
              <pre className="code" tabIndex={0} aria-label={t('accounts.rsaKeyOf', { name: account.name })}>
                {account.rsa_public_key}
              </pre>
              <div className="actions">
                <CopyButton text={account.rsa_public_key} label={t('accounts.copyKey')} />
                <button
                  type="button"
                  className="button-secondary"
                  onClick={() => downloadText(`${account.oa_id}-public-key.pem`, account.rsa_public_key!, 'application/x-pem-file')}
                >
                  {t('accounts.downloadPem')}
                </button>
              </div>
            </>
          ) : (
            <p className="empty">{t('accounts.noRsaKey')}</p>
          )}
        </article>
      ))}
    </section>
  );
}
