import { useId, useState, type FormEvent } from 'react';
import { request, type ConsoleApiError } from '../api.ts';
import type { InvitationView, SessionView } from '../api-types.ts';
import { DateTime, Details, ErrorAlert, Loading, PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { navigate } from '../router.tsx';
import { useSession } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';

const MIN_PASSWORD = 10;
const MAX_PASSWORD = 200;

export function AcceptInvitationPage({ token }: { token: string }) {
  const { t } = useI18n();
  const { signedIn } = useSession();
  const invitation = useApi<InvitationView>(`/invitations/${encodeURIComponent(token)}`);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const passwordId = useId();
  const repeatId = useId();
  const passwordHint = useId();
  const repeatHint = useId();

  const lengthProblem =
    password.length === 0 ? null : password.length < MIN_PASSWORD || password.length > MAX_PASSWORD ? t('invitation.passwordLength', { min: MIN_PASSWORD, max: MAX_PASSWORD }) : null;
  const mismatch = repeat.length > 0 && repeat !== password ? t('invitation.mismatch') : null;
  const ready = password.length >= MIN_PASSWORD && password.length <= MAX_PASSWORD && password === repeat;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      const view = await request<SessionView>('POST', `/invitations/${encodeURIComponent(token)}/accept`, {
        body: { password },
        redirectOnUnauthenticated: false,
      });
      signedIn(view);
      navigate('/', { replace: true });
    } catch (caught) {
      setError(toApiError(caught));
      setBusy(false);
    }
  };

  return (
    <section className="card narrow">
      <PageHeading title={t('invitation.title')}>{t('invitation.title')}</PageHeading>
      {invitation.loading ? <Loading /> : null}
      {invitation.error ? (
        <>
          <ErrorAlert error={invitation.error.status === 404 ? t('invitation.notFound') : invitation.error} />
        </>
      ) : null}
      {invitation.data ? (
        <>
          <p>{t('invitation.intro', { workspace: invitation.data.workspace.name })}</p>
          <Details
            items={[
              [t('invitation.email'), invitation.data.email],
              [t('invitation.role'), t(`role.${invitation.data.role}`)],
              [t('invitation.workspace'), invitation.data.workspace.name],
              [t('invitation.expiresAt'), <DateTime value={invitation.data.expires_at} />],
            ]}
          />
          <ErrorAlert error={error} />
          <form onSubmit={(event) => void submit(event)} className="form">
            <input type="email" autoComplete="username" value={invitation.data.email} readOnly hidden />
            <div className="field">
              <label htmlFor={passwordId}>{t('invitation.password')}</label>
              <input
                id={passwordId}
                type="password"
                autoComplete="new-password"
                required
                minLength={MIN_PASSWORD}
                maxLength={MAX_PASSWORD}
                value={password}
                aria-invalid={lengthProblem !== null}
                aria-describedby={passwordHint}
                onChange={(event) => setPassword(event.target.value)}
              />
              <span id={passwordHint} className={lengthProblem ? 'hint hint-error' : 'hint'}>
                {lengthProblem ?? t('invitation.passwordLength', { min: MIN_PASSWORD, max: MAX_PASSWORD })}
              </span>
            </div>
            <div className="field">
              <label htmlFor={repeatId}>{t('invitation.repeat')}</label>
              <input
                id={repeatId}
                type="password"
                autoComplete="new-password"
                required
                value={repeat}
                aria-invalid={mismatch !== null}
                aria-describedby={repeatHint}
                onChange={(event) => setRepeat(event.target.value)}
              />
              <span id={repeatHint} className={mismatch ? 'hint hint-error' : 'hint'}>
                {mismatch ?? ''}
              </span>
            </div>
            <button type="submit" disabled={!ready || busy}>
              {t('invitation.submit')}
            </button>
          </form>
        </>
      ) : null}
    </section>
  );
}
