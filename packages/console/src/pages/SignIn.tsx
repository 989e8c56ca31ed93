import { useEffect, useId, useState, type FormEvent } from 'react';
import { request, type ConsoleApiError } from '../api.ts';
import type { SessionView } from '../api-types.ts';
import { ErrorAlert, PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { navigate, safeNext, useLocation } from '../router.tsx';
import { useSession } from '../session.tsx';
import { toApiError } from '../use-api.ts';

export function SignInPage() {
  const { t } = useI18n();
  const { session, signedIn } = useSession();
  const { search } = useLocation();
  const next = safeNext(new URLSearchParams(search).get('next'));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const emailId = useId();
  const passwordId = useId();

  useEffect(() => {
    if (session) navigate(next, { replace: true });
  }, [session, next]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const view = await request<SessionView>('POST', '/session', { body: { email, password }, redirectOnUnauthenticated: false });
      signedIn(view);
    } catch (caught) {
      setError(toApiError(caught));
      setBusy(false);
    }
  };

  return (
    <section className="card narrow">
      <PageHeading title={t('signIn.title')}>{t('signIn.title')}</PageHeading>
      <p className="muted">{t('signIn.intro')}</p>
      <ErrorAlert error={error} />
      <form onSubmit={(event) => void submit(event)} className="form">
        <div className="field">
          <label htmlFor={emailId}>{t('signIn.email')}</label>
          <input id={emailId} type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={passwordId}>{t('signIn.password')}</label>
          <input
            id={passwordId}
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          {busy ? t('signIn.signingIn') : t('signIn.submit')}
        </button>
      </form>
    </section>
  );
}
