/** API keys: create (the key shown once), revoke, last use, the delivery-report webhook URL and its test report. */
import { useId, useState, type FormEvent } from 'react';
import { api, type ConsoleApiError } from '../api.ts';
import { SCOPES, type ApiKeyList, type ApiKeyView, type CreatedApiKey, type Scope, type TestReportResult } from '../api-types.ts';
import { ConfirmButton, CopyButton } from '../components/actions.tsx';
import { Dash, DateTime, Details, ErrorAlert, Loading, Notice, PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { useSignedIn } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';

function WebhookRules({ id }: { id: string }) {
  const { t } = useI18n();
  return (
    <div id={id} className="hint rules">
      {t('keys.urlRulesTitle')}
      <ul>
        <li>{t('keys.urlRuleScheme')}</li>
        <li>{t('keys.urlRulePrivate')}</li>
        <li>{t('keys.urlRuleSigned')}</li>
      </ul>
    </div>
  );
}

function CreateKey({ onCreated }: { onCreated(key: CreatedApiKey): void }) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(SCOPES));
  const [webhookUrl, setWebhookUrl] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const ids = { name: useId(), url: useId(), rules: useId() };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: { name: string; scopes: Scope[]; webhook_url?: string } = { name: name.trim(), scopes: SCOPES.filter((scope) => scopes.has(scope)) };
      if (webhookUrl.trim() !== '') body.webhook_url = webhookUrl.trim();
      onCreated(await api.post<CreatedApiKey>('/api-keys', body));
      setName('');
      setWebhookUrl('');
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="form card" onSubmit={(event) => void submit(event)} aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">{t('keys.create')}</h2>
      <div className="field">
        <label htmlFor={ids.name}>{t('keys.name')}</label>
        <input id={ids.name} required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      </div>
      <fieldset>
        <legend>{t('keys.scopes')}</legend>
        {SCOPES.map((scope) => (
          <div key={scope} className="field-inline">
            <input
              id={`${ids.name}-${scope}`}
              type="checkbox"
              checked={scopes.has(scope)}
              onChange={(event) => {
                const next = new Set(scopes);
                if (event.target.checked) next.add(scope);
                else next.delete(scope);
                setScopes(next);
              }}
            />
            <label htmlFor={`${ids.name}-${scope}`}>
              <span className="mono">{scope}</span> — {t(`scope.${scope}`)}
            </label>
          </div>
        ))}
      </fieldset>
      <div className="field">
        <label htmlFor={ids.url}>{t('keys.webhookUrlOptional')}</label>
        <input id={ids.url} type="url" inputMode="url" placeholder="https://" value={webhookUrl} aria-describedby={ids.rules} onChange={(event) => setWebhookUrl(event.target.value)} />
        <WebhookRules id={ids.rules} />
      </div>
      <ErrorAlert error={error} />
      <button type="submit" disabled={busy || name.trim() === '' || scopes.size === 0}>
        {t('keys.createSubmit')}
      </button>
    </form>
  );
}

function WebhookEditor({ apiKey, onSaved }: { apiKey: ApiKeyView; onSaved(key: ApiKeyView): void }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState(apiKey.webhook_url ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const ids = { url: useId(), rules: useId(), form: useId() };

  const save = async (value: string | null) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const updated = await api.patch<ApiKeyView>(`/api-keys/${encodeURIComponent(apiKey.id)}`, { webhook_url: value });
      setUrl(updated.webhook_url ?? '');
      setSaved(value === null ? t('keys.webhookRemoved') : t('keys.webhookSaved'));
      setOpen(false);
      onSaved(updated);
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="webhook-editor">
      <div className="actions">
        <button type="button" className="button-secondary" aria-expanded={open} aria-controls={ids.form} onClick={() => setOpen(!open)}>
          {apiKey.webhook_url === null ? t('keys.setWebhook') : t('keys.changeWebhook')}
        </button>
        {apiKey.webhook_url !== null ? (
          <ConfirmButton
            label={t('keys.removeWebhook')}
            confirmLabel={t('keys.confirmRemoveWebhook')}
            question={t('keys.removeWebhookQuestion')}
            disabled={busy}
            onConfirm={() => save(null)}
          />
        ) : null}
      </div>
      {saved ? <Notice tone="success">{saved}</Notice> : null}
      {open ? (
        <form
          id={ids.form}
          className="form"
          onSubmit={(event) => {
            event.preventDefault();
            void save(url.trim());
          }}
        >
          <div className="field">
            <label htmlFor={ids.url}>{t('keys.webhookUrlFor', { name: apiKey.name })}</label>
            <input id={ids.url} type="url" inputMode="url" required placeholder="https://" value={url} aria-describedby={ids.rules} onChange={(event) => setUrl(event.target.value)} />
            <WebhookRules id={ids.rules} />
          </div>
          <ErrorAlert error={error} />
          <div className="actions">
            <button type="submit" disabled={busy || url.trim() === ''}>
              {t('keys.saveWebhook')}
            </button>
            <button type="button" className="button-secondary" onClick={() => setOpen(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      ) : (
        <ErrorAlert error={error} />
      )}
    </div>
  );
}

function TestReport({ apiKey }: { apiKey: ApiKeyView }) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<TestReportResult | null>(null);
  const [error, setError] = useState<ConsoleApiError | null>(null);

  const run = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await api.post<TestReportResult>(`/api-keys/${encodeURIComponent(apiKey.id)}/test-report`));
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="test-report">
      <button type="button" className="button-secondary" disabled={busy || apiKey.webhook_url === null} onClick={() => void run()}>
        {busy ? t('keys.testSending') : t('keys.sendTest')}
      </button>
      <ErrorAlert error={error} />
      {result ? (
        <div className="test-result" data-testid="test-report-result">
          <h4>{t('keys.testResult')}</h4>
          <Details
            items={[
              [t('deliveries.url'), <span className="mono break">{result.url}</span>],
              [t('keys.receiverStatus'), <span className="mono" data-testid="test-report-status">{result.status_code ?? '—'}</span>],
              [t('deliveries.latency'), t('common.milliseconds', { value: result.latency_ms })],
              [t('deliveries.error'), <Dash value={result.error} />],
            ]}
          />
          <h5>{t('keys.receiverBody')}</h5>
          <pre className="code" tabIndex={0} aria-label={t('keys.receiverBody')}>
            {result.response_body === '' ? t('keys.emptyBody') : result.response_body}
          </pre>
          <h5>{t('keys.requestBody')}</h5>
          <pre className="code" tabIndex={0} aria-label={t('keys.requestBody')}>
            {result.request_body}
          </pre>
        </div>
      ) : null}
    </div>
  );
}

function KeyCard({ apiKey, canWrite, onChanged }: { apiKey: ApiKeyView; canWrite: boolean; onChanged(key: ApiKeyView): void }) {
  const { t } = useI18n();
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const revoked = apiKey.revoked_at !== null;

  const revoke = async () => {
    setError(null);
    try {
      onChanged(await api.post<ApiKeyView>(`/api-keys/${encodeURIComponent(apiKey.id)}/revoke`));
    } catch (caught) {
      setError(toApiError(caught));
    }
  };

  return (
    <article className={revoked ? 'card key-card revoked' : 'card key-card'} aria-labelledby={`key-${apiKey.id}`} data-key-id={apiKey.id}>
      <h3 id={`key-${apiKey.id}`}>
        {apiKey.name} <span className="mono muted">{apiKey.key_prefix}…</span>{' '}
        {revoked ? <span className="badge badge-revoked">{t('keys.revoked')}</span> : <span className="badge badge-active">{t('keys.active')}</span>}
      </h3>
      <Details
        items={[
          [t('keys.id'), <span className="mono">{apiKey.id}</span>],
          [t('keys.scopes'), <span className="mono">{apiKey.scopes.join(', ')}</span>],
          [t('keys.webhookUrl'), apiKey.webhook_url ? <span className="mono break" data-testid="key-webhook-url">{apiKey.webhook_url}</span> : <span className="muted">{t('keys.noWebhook')}</span>],
          [t('keys.createdAt'), <DateTime value={apiKey.created_at} />],
          [t('keys.lastUsedAt'), apiKey.last_used_at ? <DateTime value={apiKey.last_used_at} /> : <span className="muted">{t('keys.neverUsed')}</span>],
          [t('keys.revokedAt'), <DateTime value={apiKey.revoked_at} />],
        ]}
      />
      <ErrorAlert error={error} />
      {canWrite && !revoked ? (
        <>
          <WebhookEditor apiKey={apiKey} onSaved={onChanged} />
          <TestReport apiKey={apiKey} />
          <div className="actions danger-zone">
            <ConfirmButton label={t('keys.revoke')} confirmLabel={t('keys.confirmRevoke')} question={t('keys.revokeQuestion', { name: apiKey.name })} onConfirm={revoke} />
          </div>
        </>
      ) : null}
    </article>
  );
}

export function ApiKeysPage() {
  const { t } = useI18n();
  const { permissions } = useSignedIn();
  const keys = useApi<ApiKeyList>('/api-keys');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);

  const replace = (key: ApiKeyView) => {
    if (!keys.data) return;
    const exists = keys.data.api_keys.some((candidate) => candidate.id === key.id);
    keys.setData({ api_keys: exists ? keys.data.api_keys.map((candidate) => (candidate.id === key.id ? key : candidate)) : [key, ...keys.data.api_keys] });
  };

  return (
    <section>
      <PageHeading title={t('keys.title')}>{t('keys.title')}</PageHeading>
      {!permissions.canWrite ? <Notice>{t('keys.readOnly')}</Notice> : null}
      {created ? (
        <div className="card new-key" role="region" aria-labelledby="new-key-heading">
          <h2 id="new-key-heading">{t('keys.newKey', { name: created.name })}</h2>
          <Notice tone="warning">{t('keys.shownOnce')}</Notice>
          <p>
            <code className="secret" data-testid="new-api-key">
              {created.key}
            </code>
          </p>
          <div className="actions">
            <CopyButton text={created.key} label={t('keys.copyKey')} />
            <button type="button" className="button-secondary" onClick={() => setCreated(null)}>
              {t('keys.done')}
            </button>
          </div>
        </div>
      ) : null}
      {permissions.canWrite ? (
        <CreateKey
          onCreated={(key) => {
            setCreated(key);
            const { key: _secret, ...view } = key;
            replace(view);
          }}
        />
      ) : null}
      <h2>{t('keys.list')}</h2>
      <ErrorAlert error={keys.error} />
      {keys.loading && !keys.data ? <Loading /> : null}
      {keys.data && keys.data.api_keys.length === 0 ? <p className="empty">{t('keys.none')}</p> : null}
      {keys.data?.api_keys.map((key) => <KeyCard key={key.id} apiKey={key} canWrite={permissions.canWrite} onChanged={replace} />)}
    </section>
  );
}
