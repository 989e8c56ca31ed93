/**
 * Send: pick a template, then either one message from a form generated from its params, or many
 * from a CSV file (components/CsvSend.tsx). Both can ask for delivery reports to an API key's webhook.
 */
import { useId, useMemo, useRef, useState, type FormEvent } from 'react';
import { api, newIdempotencyKey, type ConsoleApiError } from '../api.ts';
import type { ApiKeyList, SendMode, SendRequest, SendResponse, SenderAccountList, Template, TemplateList } from '../api-types.ts';
import { DateTime, ErrorAlert, Loading, Money, Notice, PageHeading } from '../components/common.tsx';
import { CsvSend } from '../components/CsvSend.tsx';
import { paramProblem, TemplateParamFields } from '../components/TemplateForm.tsx';
import { vietnamLocalToIso } from '../format.ts';
import { useI18n } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { useSignedIn } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';

const TRACKING_ID = /^[A-Za-z0-9._-]{1,48}$/;

function SingleSend({ template, mode, apiKeyId }: { template: Template; mode: SendMode | undefined; apiKeyId: string | undefined }) {
  const { t } = useI18n();
  const [values, setValues] = useState<Record<string, string>>({});
  const [touched, setTouched] = useState<Set<string> | 'all'>(new Set());
  const [phone, setPhone] = useState('');
  const [trackingId, setTrackingId] = useState('');
  const [schedule, setSchedule] = useState(false);
  const [sendAt, setSendAt] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const [sent, setSent] = useState<SendResponse | null>(null);
  const ids = { phone: useId(), phoneHint: useId(), tracking: useId(), trackingHint: useId(), schedule: useId(), sendAt: useId() };

  const problems = template.params.map((param) => paramProblem(param, values[param.name] ?? '', t)).filter((problem) => problem !== null);
  const trackingProblem = trackingId !== '' && !TRACKING_ID.test(trackingId) ? t('send.trackingIdRule') : null;
  const phoneMissing = phone.trim() === '';
  const scheduleMissing = schedule && sendAt === '';
  const ready = problems.length === 0 && trackingProblem === null && !phoneMissing && !scheduleMissing;

  // One key per message: sending the same form again after a lost answer replays the first send
  // instead of charging twice; a changed form, or a send that succeeded, takes a new key.
  const pendingSend = useRef<{ body: string; key: string } | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched('all');
    if (!ready) return;
    setBusy(true);
    setError(null);
    setSent(null);
    const templateData: Record<string, string> = {};
    for (const param of template.params) {
      const value = values[param.name] ?? '';
      if (value !== '') templateData[param.name] = value;
    }
    const body: SendRequest = { template_id: template.template_id, phone: phone.trim(), template_data: templateData };
    if (trackingId !== '') body.tracking_id = trackingId;
    if (schedule && sendAt !== '') body.send_at = vietnamLocalToIso(sendAt);
    if (mode !== undefined) body.mode = mode;
    if (apiKeyId !== undefined) body.api_key_id = apiKeyId;
    const bodyText = JSON.stringify(body);
    if (pendingSend.current?.body !== bodyText) pendingSend.current = { body: bodyText, key: newIdempotencyKey() };
    try {
      setSent(await api.post<SendResponse>('/messages/send', body, { idempotencyKey: pendingSend.current.key }));
      pendingSend.current = null;
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="form" onSubmit={(event) => void submit(event)} noValidate aria-labelledby="single-send-heading">
      <TemplateParamFields
        params={template.params}
        values={values}
        touched={touched}
        onChange={(name, value) => {
          setValues({ ...values, [name]: value });
          if (touched !== 'all') setTouched(new Set(touched).add(name));
        }}
      />
      <div className="field">
        <label htmlFor={ids.phone}>{t('send.phone')}</label>
        <input
          id={ids.phone}
          name="phone"
          type="tel"
          autoComplete="off"
          required
          value={phone}
          aria-invalid={touched === 'all' && phoneMissing}
          aria-describedby={ids.phoneHint}
          onChange={(event) => setPhone(event.target.value)}
        />
        <span id={ids.phoneHint} className={touched === 'all' && phoneMissing ? 'hint hint-error' : 'hint'}>
          {touched === 'all' && phoneMissing ? t('send.required') : t('send.phoneHint')}
        </span>
      </div>
      <div className="field">
        <label htmlFor={ids.tracking}>{t('send.trackingId')}</label>
        <input
          id={ids.tracking}
          name="tracking_id"
          value={trackingId}
          aria-invalid={trackingProblem !== null}
          aria-describedby={ids.trackingHint}
          onChange={(event) => setTrackingId(event.target.value)}
        />
        <span id={ids.trackingHint} className={trackingProblem ? 'hint hint-error' : 'hint'}>
          {trackingProblem ?? t('send.trackingIdHint')}
        </span>
      </div>
      <div className="field field-inline">
        <input id={ids.schedule} type="checkbox" checked={schedule} onChange={(event) => setSchedule(event.target.checked)} />
        <label htmlFor={ids.schedule}>{t('send.schedule')}</label>
      </div>
      {schedule ? (
        <div className="field">
          <label htmlFor={ids.sendAt}>{t('send.sendAt')}</label>
          <input id={ids.sendAt} type="datetime-local" required value={sendAt} aria-invalid={touched === 'all' && scheduleMissing} onChange={(event) => setSendAt(event.target.value)} />
          <span className="hint">{t('send.sendAtHint')}</span>
        </div>
      ) : null}
      <ErrorAlert error={error} />
      {touched === 'all' && !ready ? <ErrorAlert error={t('send.fixProblems')} /> : null}
      <button type="submit" disabled={busy}>
        {busy ? t('send.sending') : t('send.submit')}
      </button>
      {sent ? (
        <Notice tone="success">
          {sent.scheduled_at ? t('send.scheduledResult') : t('send.queuedResult')}{' '}
          <Link to={`/messages/${encodeURIComponent(sent.msg_id)}`} className="mono" data-testid="sent-message-link">
            {sent.msg_id}
          </Link>
          {sent.scheduled_at ? (
            <>
              {' · '}
              <DateTime value={sent.scheduled_at} />
            </>
          ) : null}
          {' · '}
          {t('messages.trackingId')}: <span className="mono">{sent.tracking_id}</span>
        </Notice>
      ) : null}
    </form>
  );
}

export function SendPage() {
  const { t } = useI18n();
  const { permissions } = useSignedIn();
  const templates = useApi<TemplateList>('/templates');
  const keys = useApi<ApiKeyList>('/api-keys');
  const accounts = useApi<SenderAccountList>('/sender-accounts');
  const [chosenTemplate, setTemplateId] = useState('');
  const [mode, setMode] = useState<'' | SendMode>('');
  const [reportKey, setReportKey] = useState<string | null>(null);
  const ids = { template: useId(), mode: useId(), key: useId(), keyHint: useId() };

  const sendable = useMemo(() => (templates.data?.templates ?? []).filter((template) => template.status === 'ENABLE'), [templates.data]);
  const hookKeys = useMemo(() => (keys.data?.api_keys ?? []).filter((key) => key.revoked_at === null && key.webhook_url !== null), [keys.data]);
  // The first enabled template until another is picked.
  const templateId = chosenTemplate === '' ? (sendable[0]?.template_id ?? '') : chosenTemplate;
  const template = sendable.find((candidate) => candidate.template_id === templateId) ?? null;
  const account = accounts.data?.sender_accounts.find((candidate) => candidate.oa_id === template?.oa_id) ?? null;

  // Delivery reports go to the first key with a webhook unless another (or none) is chosen.
  const chosenKey = reportKey ?? hookKeys[0]?.id ?? '';
  const apiKeyId = chosenKey === '' ? undefined : chosenKey;

  if (!permissions.canWrite) {
    return (
      <section>
        <PageHeading title={t('send.title')}>{t('send.title')}</PageHeading>
        <Notice>{t('send.readOnly')}</Notice>
      </section>
    );
  }

  return (
    <section>
      <PageHeading title={t('send.title')}>{t('send.title')}</PageHeading>
      <ErrorAlert error={templates.error ?? keys.error} />
      {templates.loading && !templates.data ? <Loading /> : null}
      {templates.data && sendable.length === 0 ? <Notice tone="warning">{t('send.noTemplates')}</Notice> : null}
      {sendable.length > 0 ? (
        <div className="card">
          <div className="form-grid">
            <div className="field">
              <label htmlFor={ids.template}>{t('send.template')}</label>
              <select id={ids.template} value={templateId} onChange={(event) => setTemplateId(event.target.value)}>
                {sendable.map((candidate) => (
                  <option key={candidate.template_id} value={candidate.template_id}>
                    {candidate.template_id} · {candidate.name}
                  </option>
                ))}
              </select>
              {template ? (
                <span className="hint">
                  {t('send.templateSummary', { oa: template.oa_name, count: template.params.length })} · <Money amount={template.price} />{' '}
                  {t('send.perMessage')}
                </span>
              ) : null}
            </div>
            <div className="field">
              <label htmlFor={ids.mode}>{t('send.mode')}</label>
              <select id={ids.mode} value={mode} onChange={(event) => setMode(event.target.value as '' | SendMode)}>
                <option value="">{t('send.modeDefault', { mode: account?.default_mode ?? '—' })}</option>
                <option value="plain">plain</option>
                <option value="hashphone">hashphone</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor={ids.key}>{t('send.reportsTo')}</label>
              <select id={ids.key} value={chosenKey} aria-describedby={ids.keyHint} onChange={(event) => setReportKey(event.target.value)}>
                {hookKeys.map((key) => (
                  <option key={key.id} value={key.id}>
                    {key.name} ({key.key_prefix}…) → {key.webhook_url}
                  </option>
                ))}
                <option value="">{t('send.noReports')}</option>
              </select>
              <span id={ids.keyHint} className="hint">
                {hookKeys.length === 0 ? t('send.noHookKeys') : t('send.reportsHint')}
              </span>
            </div>
          </div>
        </div>
      ) : null}
      {template ? (
        <>
          <h2 id="single-send-heading">{t('send.single')}</h2>
          <div className="card">
            <SingleSend key={template.template_id} template={template} mode={mode === '' ? undefined : mode} apiKeyId={apiKeyId} />
          </div>
          <h2>{t('csv.title')}</h2>
          <div className="card">
            <CsvSend key={template.template_id} template={template} mode={mode === '' ? undefined : mode} apiKeyId={apiKeyId} />
          </div>
        </>
      ) : null}
    </section>
  );
}
