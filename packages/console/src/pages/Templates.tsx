import { useId, useState } from 'react';
import { TEMPLATE_STATUSES, type SenderAccountList, type TemplateList } from '../api-types.ts';
import { ErrorAlert, Loading, Money, PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { useApi } from '../use-api.ts';

export function TemplatesPage() {
  const { t } = useI18n();
  const [oaId, setOaId] = useState('');
  const [status, setStatus] = useState('');
  const templates = useApi<TemplateList>('/templates', { oa_id: oaId, status });
  const accounts = useApi<SenderAccountList>('/sender-accounts');
  const ids = { oa: useId(), status: useId() };

  return (
    <section>
      <PageHeading title={t('templates.title')}>{t('templates.title')}</PageHeading>
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label={t('common.filters')}>
        <div className="field">
          <label htmlFor={ids.oa}>{t('messages.senderAccount')}</label>
          <select id={ids.oa} value={oaId} onChange={(event) => setOaId(event.target.value)}>
            <option value="">{t('common.all')}</option>
            {(accounts.data?.sender_accounts ?? []).map((account) => (
              <option key={account.oa_id} value={account.oa_id}>
                {account.name} ({account.oa_id})
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.status}>{t('templates.status')}</label>
          <select id={ids.status} value={status} onChange={(event) => setStatus(event.target.value)}>
            <option value="">{t('common.all')}</option>
            {TEMPLATE_STATUSES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ErrorAlert error={templates.error} />
      {templates.loading && !templates.data ? <Loading /> : null}
      {templates.data && templates.data.templates.length === 0 ? <p className="empty">{t('templates.none')}</p> : null}
      {templates.data && templates.data.templates.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{t('templates.title')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('templates.id')}</th>
                <th scope="col">{t('templates.name')}</th>
                <th scope="col">{t('templates.status')}</th>
                <th scope="col">{t('messages.senderAccount')}</th>
                <th scope="col">{t('templates.type')}</th>
                <th scope="col">{t('templates.price')}</th>
                <th scope="col">{t('templates.params')}</th>
                <th scope="col">{t('templates.preview')}</th>
              </tr>
            </thead>
            <tbody>
              {templates.data.templates.map((template) => (
                <tr key={template.template_id}>
                  <th scope="row" className="mono">
                    {template.template_id}
                  </th>
                  <td>{template.name}</td>
                  <td>
                    <span className={`badge badge-template-${template.status.toLowerCase()}`}>{template.status}</span>
                  </td>
                  <td>
                    {template.oa_name} <span className="mono muted">{template.oa_id}</span>
                  </td>
                  <td>{template.template_type}</td>
                  <td>
                    <Money amount={template.price} />
                  </td>
                  <td>
                    <ul className="param-list">
                      {template.params.map((param) => (
                        <li key={param.name}>
                          <span className="mono">{param.name}</span> · {param.type} ·{' '}
                          {param.required ? t('templates.required') : t('templates.optional')} ·{' '}
                          {t('templates.length', { min: param.min_length, max: param.max_length })}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    {/^https?:\/\//i.test(template.preview_url) ? (
                      <a href={template.preview_url} target="_blank" rel="noreferrer noopener">
                        {t('templates.openPreview')}
                        <span className="visually-hidden"> {template.name} ({t('common.newWindow')})</span>
                      </a>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
