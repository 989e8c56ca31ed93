/** Every filter of the message list, kept in the address (so back, reload and sign-in return to it), and paging. */
import { useId, useState, type FormEvent } from 'react';
import { MESSAGE_STATUSES, type MessageList, type SenderAccountList, type TemplateList } from '../api-types.ts';
import { Pager } from '../components/actions.tsx';
import { ErrorAlert, Loading, messageStatusLabel, PageHeading } from '../components/common.tsx';
import { MessageTable } from '../components/tables.tsx';
import { isoToVietnamLocal, vietnamLocalToIso } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';
import { navigate, useLocation } from '../router.tsx';
import { useApi } from '../use-api.ts';

const FILTERS = ['status', 'tracking_id', 'phone', 'template_id', 'oa_id', 'from', 'to'] as const;
type FilterName = (typeof FILTERS)[number];
const PAGE_SIZES = [25, 50, 100, 200];

export function MessagesPage() {
  const { t } = useI18n();
  const { search } = useLocation();
  const params = new URLSearchParams(search);
  const limit = Number(params.get('limit') ?? 50) || 50;
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const applied: Record<FilterName, string> = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Record<FilterName, string>;

  const list = useApi<MessageList>('/messages', { ...applied, limit, offset });
  const templates = useApi<TemplateList>('/templates');
  const accounts = useApi<SenderAccountList>('/sender-accounts');

  // The form edits a draft; Vietnam-time fields show from/to in Vietnam time.
  const [draft, setDraft] = useState<Record<FilterName, string>>(() => ({
    ...applied,
    from: applied.from ? isoToVietnamLocal(applied.from) : '',
    to: applied.to ? isoToVietnamLocal(applied.to) : '',
  }));
  const [pageSize, setPageSize] = useState(limit);
  const ids = {
    status: useId(),
    tracking_id: useId(),
    phone: useId(),
    template_id: useId(),
    oa_id: useId(),
    from: useId(),
    to: useId(),
    limit: useId(),
  };

  const go = (filters: Record<FilterName, string>, nextOffset: number, nextLimit: number) => {
    const query = new URLSearchParams();
    for (const name of FILTERS) if (filters[name] !== '') query.set(name, filters[name]);
    if (nextLimit !== 50) query.set('limit', String(nextLimit));
    if (nextOffset > 0) query.set('offset', String(nextOffset));
    const text = query.toString();
    navigate(`/messages${text === '' ? '' : `?${text}`}`);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    go(
      {
        ...draft,
        tracking_id: draft.tracking_id.trim(),
        phone: draft.phone.trim(),
        from: draft.from === '' ? '' : new Date(vietnamLocalToIso(draft.from)).toISOString(),
        to: draft.to === '' ? '' : new Date(vietnamLocalToIso(draft.to)).toISOString(),
      },
      0,
      pageSize,
    );
  };

  const clear = () => {
    setDraft({ status: '', tracking_id: '', phone: '', template_id: '', oa_id: '', from: '', to: '' });
    go({ status: '', tracking_id: '', phone: '', template_id: '', oa_id: '', from: '', to: '' }, 0, pageSize);
  };

  const set = (name: FilterName) => (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value });

  return (
    <section>
      <PageHeading title={t('messages.title')}>{t('messages.title')}</PageHeading>
      <form className="filters" onSubmit={submit} aria-label={t('common.filters')}>
        <div className="field">
          <label htmlFor={ids.status}>{t('messages.status')}</label>
          <select id={ids.status} value={draft.status} onChange={set('status')}>
            <option value="">{t('common.all')}</option>
            {MESSAGE_STATUSES.map((status) => (
              <option key={status} value={status}>
                {messageStatusLabel(status, t)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.tracking_id}>{t('messages.trackingId')}</label>
          <input id={ids.tracking_id} value={draft.tracking_id} onChange={set('tracking_id')} />
        </div>
        <div className="field">
          <label htmlFor={ids.phone}>{t('messages.phone')}</label>
          <input id={ids.phone} type="tel" value={draft.phone} onChange={set('phone')} />
        </div>
        <div className="field">
          <label htmlFor={ids.template_id}>{t('messages.template')}</label>
          <select id={ids.template_id} value={draft.template_id} onChange={set('template_id')}>
            <option value="">{t('common.all')}</option>
            {(templates.data?.templates ?? []).map((template) => (
              <option key={template.template_id} value={template.template_id}>
                {template.template_id} · {template.name}
              </option>
            ))}
            {draft.template_id !== '' && !templates.data?.templates.some((template) => template.template_id === draft.template_id) ? (
              <option value={draft.template_id}>{draft.template_id}</option>
            ) : null}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.oa_id}>{t('messages.senderAccount')}</label>
          <select id={ids.oa_id} value={draft.oa_id} onChange={set('oa_id')}>
            <option value="">{t('common.all')}</option>
            {(accounts.data?.sender_accounts ?? []).map((account) => (
              <option key={account.oa_id} value={account.oa_id}>
                {account.name} ({account.oa_id})
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.from}>{t('messages.from')}</label>
          <input id={ids.from} type="datetime-local" value={draft.from} onChange={set('from')} />
        </div>
        <div className="field">
          <label htmlFor={ids.to}>{t('messages.to')}</label>
          <input id={ids.to} type="datetime-local" value={draft.to} onChange={set('to')} />
        </div>
        <div className="field">
          <label htmlFor={ids.limit}>{t('common.pageSize')}</label>
          <select id={ids.limit} value={pageSize} onChange={(event) => setPageSize(Number(event.target.value))}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </div>
        <div className="filter-actions">
          <button type="submit">{t('common.apply')}</button>
          <button type="button" className="button-secondary" onClick={clear}>
            {t('common.clear')}
          </button>
        </div>
      </form>
      <ErrorAlert error={list.error} />
      {list.loading && !list.data ? <Loading /> : null}
      {list.data ? (
        <>
          <MessageTable messages={list.data.messages} caption={t('messages.title')} />
          <Pager offset={list.data.offset} limit={list.data.limit} count={list.data.count} hasMore={list.data.has_more} onChange={(next) => go(applied, next, limit)} />
        </>
      ) : null}
    </section>
  );
}
