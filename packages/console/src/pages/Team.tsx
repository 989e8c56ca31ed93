/** The workspace's people; owners invite (the one-time link is shown here), change roles and remove. */
import { useId, useState, type FormEvent } from 'react';
import { api, type ConsoleApiError } from '../api.ts';
import { ROLES, type CreatedInvitation, type Role, type TeamList, type TeamUser } from '../api-types.ts';
import { ConfirmButton, CopyButton } from '../components/actions.tsx';
import { DateTime, Details, ErrorAlert, Loading, Notice, PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { useSignedIn } from '../session.tsx';
import { toApiError, useApi } from '../use-api.ts';

function Invite({ onInvited }: { onInvited(invitation: CreatedInvitation): void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const ids = { email: useId(), role: useId() };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onInvited(await api.post<CreatedInvitation>('/team/invitations', { email: email.trim(), role }));
      setEmail('');
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="form card" onSubmit={(event) => void submit(event)} aria-labelledby="invite-heading">
      <h2 id="invite-heading">{t('team.invite')}</h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={ids.email}>{t('team.email')}</label>
          <input id={ids.email} type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.role}>{t('team.role')}</label>
          <select id={ids.role} value={role} onChange={(event) => setRole(event.target.value as Role)}>
            {ROLES.map((option) => (
              <option key={option} value={option}>
                {t(`role.${option}`)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p className="hint">{t('team.rolesHint')}</p>
      <ErrorAlert error={error} />
      <button type="submit" disabled={busy || email.trim() === ''}>
        {t('team.inviteSubmit')}
      </button>
    </form>
  );
}

function MemberRow({ user, isOwner, isSelf, onChanged, onRemoved }: { user: TeamUser; isOwner: boolean; isSelf: boolean; onChanged(user: TeamUser): void; onRemoved(id: string): void }) {
  const { t } = useI18n();
  const [role, setRole] = useState<Role>(user.role);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const roleId = useId();

  const saveRole = async () => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await api.patch<TeamUser>(`/team/${encodeURIComponent(user.id)}`, { role }));
    } catch (caught) {
      setError(toApiError(caught));
      setRole(user.role);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setError(null);
    try {
      await api.delete(`/team/${encodeURIComponent(user.id)}`);
      onRemoved(user.id);
    } catch (caught) {
      setError(toApiError(caught));
    }
  };

  return (
    <tr data-user-id={user.id}>
      <th scope="row">
        {user.email}
        {isSelf ? <span className="muted"> ({t('team.you')})</span> : null}
      </th>
      <td>
        {isOwner ? (
          <span className="inline-form">
            <label htmlFor={roleId} className="visually-hidden">
              {t('team.roleOf', { email: user.email })}
            </label>
            <select id={roleId} value={role} onChange={(event) => setRole(event.target.value as Role)}>
              {ROLES.map((option) => (
                <option key={option} value={option}>
                  {t(`role.${option}`)}
                </option>
              ))}
            </select>
            {role !== user.role ? (
              <button type="button" disabled={busy} onClick={() => void saveRole()}>
                {t('team.saveRole')}
              </button>
            ) : null}
          </span>
        ) : (
          t(`role.${user.role}`)
        )}
      </td>
      <td>{user.status === 'active' ? t('team.active') : t('team.invited')}</td>
      <td>
        <DateTime value={user.created_at} />
      </td>
      <td>
        <DateTime value={user.last_sign_in_at} />
      </td>
      {isOwner ? (
        <td>
          <ConfirmButton label={t('team.remove')} confirmLabel={t('team.confirmRemove')} question={t('team.removeQuestion', { email: user.email })} onConfirm={remove} />
          <ErrorAlert error={error} />
        </td>
      ) : null}
    </tr>
  );
}

export function TeamPage() {
  const { t } = useI18n();
  const { permissions, user: me } = useSignedIn();
  const team = useApi<TeamList>('/team');
  const [invitation, setInvitation] = useState<CreatedInvitation | null>(null);

  const update = (users: TeamUser[]) => team.setData({ users });

  return (
    <section>
      <PageHeading title={t('team.title')}>{t('team.title')}</PageHeading>
      {!permissions.isOwner ? <Notice>{t('team.ownersOnly')}</Notice> : null}
      {invitation ? (
        <div className="card" role="region" aria-labelledby="invitation-heading">
          <h2 id="invitation-heading">{t('team.invitationFor', { email: invitation.user.email })}</h2>
          <Notice tone="warning">{t('team.linkOnce')}</Notice>
          <p>
            <code className="secret" data-testid="invitation-url">
              {invitation.invitation_url}
            </code>
          </p>
          <Details items={[[t('team.expiresAt'), <DateTime value={invitation.expires_at} />]]} />
          <div className="actions">
            <CopyButton text={invitation.invitation_url} label={t('team.copyLink')} />
            <button type="button" className="button-secondary" onClick={() => setInvitation(null)}>
              {t('keys.done')}
            </button>
          </div>
        </div>
      ) : null}
      {permissions.isOwner ? (
        <Invite
          onInvited={(created) => {
            setInvitation(created);
            if (team.data) update([...team.data.users.filter((user) => user.id !== created.user.id), created.user]);
          }}
        />
      ) : null}
      <h2>{t('team.members')}</h2>
      <ErrorAlert error={team.error} />
      {team.loading && !team.data ? <Loading /> : null}
      {team.data ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{t('team.members')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('team.email')}</th>
                <th scope="col">{t('team.role')}</th>
                <th scope="col">{t('team.status')}</th>
                <th scope="col">{t('team.createdAt')}</th>
                <th scope="col">{t('team.lastSignIn')}</th>
                {permissions.isOwner ? <th scope="col">{t('team.actions')}</th> : null}
              </tr>
            </thead>
            <tbody>
              {team.data.users.map((user) => (
                <MemberRow
                  key={`${user.id}-${user.role}`}
                  user={user}
                  isOwner={permissions.isOwner}
                  isSelf={user.id === me.id}
                  onChanged={(changed) => update(team.data!.users.map((candidate) => (candidate.id === changed.id ? changed : candidate)))}
                  onRemoved={(id) => update(team.data!.users.filter((candidate) => candidate.id !== id))}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
